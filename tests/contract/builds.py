"""The translation builds the contract suites run, by the table's kind: onnx int8 is the onnx kind's
"int8" provision; Hugging Face families (mBART, M2M100, FSMT: tests/hf/test_source_ids.py)."""

BUILDS = ["torch-rnn", "torch-transformer", "onnx-rnn", "onnx-transformer", "onnx8-transformer"]
BUILDS += ["hf-marian", "hf-bart", "hf-t5"]
