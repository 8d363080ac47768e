"""The ``ir2onnx`` command line: every command's argparse and main, the paths it is given, batch conversion and
the summary it prints. Nothing below the command line imports this package."""
