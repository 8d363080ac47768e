"""LLM IRs as LLMs: the decoder interface (where the KV cache lives), greedy decoding, and onnxruntime-genai folders."""
