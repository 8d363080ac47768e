"""Running converted models on onnxruntime: sessions and providers, the inputs fed to a model (generated, or a
model's example inputs), and stateful models driven step by step."""
