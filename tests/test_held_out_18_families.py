"""Families held-out round 18 showed (fairseq, allennlp, pykeen, pytorch-toolbelt), each fixed once in the
shared dataflow or root selection; shapes taken from that code, not copied."""

from __future__ import annotations

from snippets import codes, lint


def test_a_local_annotated_as_a_dict_is_no_tensor():
    src = """
    from typing import Dict

    class Embedder(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(10, 4)

        def forward(self, text_field_input: torch.Tensor, key: str = "tokens"):
            tensors: Dict[str, torch.Tensor] = text_field_input[key]
            if len(tensors) == 1:
                return self.emb(list(tensors.values())[0])
            return self.emb(tensors["tokens"])
    """
    assert codes(src) == set()
    # without the author's word for it, the input's rows are what `len` reads
    assert codes(src.replace("tensors: Dict[str, torch.Tensor] =", "tensors =")) == {(11, "EXL042")}


def test_an_annotation_is_a_tensor_only_when_it_names_one():
    src = """
    from mylib.fields import TextFieldTensors

    class Backbone(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(10, 4)

        def forward(self, text: TextFieldTensors) -> torch.Tensor:
            n = len(text)
            return self.emb(text["tokens"]["token_ids"]) * n
    """
    assert codes(src) == set()  # AllenNLP's alias of a dict of dicts of tensors
    assert codes(src.replace("text: TextFieldTensors", "text: torch.LongTensor")) == {(10, "EXL042")}


def test_a_subclass_of_a_decoding_search_is_no_export_root():
    src = """
    class SequenceGenerator(nn.Module):
        def forward(self, tokens):
            out = []
            for i in range(int(tokens.max().item())):
                out.append(tokens[i])
            return out

    class SequenceGeneratorWithAlignment(SequenceGenerator):
        def forward(self, tokens):
            n = tokens.sum().item()
            return tokens[: int(n)]
    """
    assert codes(src) == set()
    assert codes(src.replace("class SequenceGeneratorWithAlignment(SequenceGenerator)", "class Aligner(nn.Module)")) == {(11, "EXL001"), (12, "EXL003")}


def test_a_forward_unpacking_ground_truth_beside_an_inference_method_is_training():
    src = """
    class Tacotron2(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(10, 4)

        def forward(self, inputs):
            (text_inputs, text_lengths, mels, max_len, output_lengths) = inputs
            steps = int(mels.size(1) / 2)
            return self.embedding(text_inputs)[:, :steps]

        def inference(self, inputs):
            return self.embedding(inputs)
    """
    assert codes(src) == set()
    # the same unpacking without ground truth among the names: a model's forward
    assert codes(src.replace("mels, max_len, output_lengths", "frames, max_len, widths").replace("mels.size", "frames.size")) == {(9, "EXL042")}


def test_a_move_to_the_device_a_conditional_expression_checked_follows_the_input():
    src = """
    class InverseSTFT(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("window_sum", torch.ones(8))

        def forward(self, magnitude):
            window_sum = self.window_sum.cuda() if magnitude.is_cuda else self.window_sum
            return magnitude * window_sum
    """
    assert codes(src) == set()
    assert codes(src.replace("magnitude.is_cuda", "magnitude.is_cpu")) == {(8, "EXL051")}


def test_a_flag_computed_from_a_setting_gates_like_the_setting():
    src = """
    import math

    class Embedder(nn.Module):
        def __init__(self, max_length: int = None):
            super().__init__()
            self._max_length = max_length
            self.emb = nn.Embedding(10, 4)

        def forward(self, token_ids):
            fold = self._max_length is not None and token_ids.size(1) > self._max_length
            if fold:
                if token_ids.max() > 5:
                    raise ValueError("bad")
                token_ids = token_ids[:, :512]
            return self.emb(token_ids)
    """
    found = {(d.line - 3, d.code, d.severity.value) for d in lint(src)}
    assert found == {(12, "EXL022", "info"), (13, "EXL020", "info")}
    # the same flag from an input's size alone is decided on the default path
    plain = {(d.line - 3, d.code, d.severity.value) for d in lint(src.replace("self._max_length is not None and ", ""))}
    assert plain == {(12, "EXL022", "warning"), (13, "EXL020", "error")}
