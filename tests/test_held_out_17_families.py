"""Families held-out round 17 showed (deepfilternet, groundingdino, SAM-HQ, torchani, parler-tts), each
fixed once in the shared dataflow; shapes taken from that code, not copied.  Every test has the
finding that must stay next to the one that must go."""

from __future__ import annotations

from exportlint.diagnostics import Severity
from snippets import codes, lint

# parler-tts' decoder: the past length is data only when `cache_position` is given, and it sizes a tensor
# only when it is not (held-out 17: an `attn_output.size()` check judged a false EXL020 error)
CORRELATED = """
class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, inputs_embeds, past_key_values=None, cache_position: torch.LongTensor | None = None):
        input_shape = inputs_embeds.shape[:-1]
        past_length = 0
        if cache_position is not None:
            past_length = cache_position[0]
        elif past_key_values is not None:
            past_length = past_key_values.get_seq_length()
        if cache_position is None:
            cache_position = torch.arange(past_length, past_length + input_shape[1])
        mask = torch.full((input_shape[1], cache_position.shape[0]), -1.0)
        h = self.proj(inputs_embeds) + mask.sum(-1, keepdim=True)
        if h.size() != (input_shape[0], input_shape[1], 8):
            raise ValueError("bad size")
        return h
"""


def test_a_value_joined_under_a_test_on_an_input_keeps_each_arm_apart():
    assert codes(CORRELATED) == set()
    # the same value where the arm that makes it data runs: still data
    given = CORRELATED.replace("if cache_position is None:\n", "if cache_position is not None:\n")
    assert codes(given) == {(18, "EXL020")}


# CLIP-style embeddings: the guard pins H/W to the configured size unless `interpolate_pos_encoding` is set;
# the arm that setting takes must see them dynamic, the code after it pinned
PINNED = """
class Embeddings(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.image_size = config.image_size
        self.patch_size = config.patch_size
        self.num_positions = (self.image_size // self.patch_size) ** 2 + 1
        self.position_embedding = nn.Embedding(self.num_positions, 8)
        self.patch_embedding = nn.Conv2d(3, 8, self.patch_size, self.patch_size)

    def interpolate_pos_encoding(self, embeddings, height, width):
        position_embedding = self.position_embedding.weight.unsqueeze(0)
        if height == width:
            return position_embedding
        return F.interpolate(position_embedding[None], size=(height // self.patch_size, width // self.patch_size))[0]

    def forward(self, pixel_values, interpolate_pos_encoding=False):
        batch_size, _, height, width = pixel_values.shape
        if not interpolate_pos_encoding and (height != self.image_size or width != self.image_size):
            raise ValueError("size")
        patch_embeds = self.patch_embedding(pixel_values).flatten(2).transpose(1, 2)
        if interpolate_pos_encoding:
            patch_embeds = patch_embeds + self.interpolate_pos_encoding(patch_embeds, height, width)
        if height > 2:
            patch_embeds = patch_embeds * 2
        return patch_embeds
"""


def test_sizes_pinned_under_the_default_setting_are_dynamic_in_the_other_settings_arm():
    found = codes(PINNED)
    assert (13, "EXL022") in found  # `height == width` with interpolate_pos_encoding=True
    assert not any(line == 25 for line, _ in found)  # `height > 2`: pinned on the default path


def test_a_tensor_built_in_init_is_a_constant_of_the_program():
    src = """
    NUMBERS = {"H": 1, "C": 6}

    class SpeciesConverter(nn.Module):
        def __init__(self, symbols=("H", "C")):
            super().__init__()
            self.atomic_numbers = torch.tensor([NUMBERS[e] for e in symbols], dtype=torch.long)

        def forward(self, atomic_nums):
            n = len(self.atomic_numbers)
            return atomic_nums.view(-1, n)
    """
    assert codes(src) == set()
    assert codes(src.replace("len(self.atomic_numbers)", "len(atomic_nums)")) == {(10, "EXL042")}


def test_a_forward_returning_text_is_no_export_root():
    src = """
    class NumbersToSymbols(nn.Module):
        def __init__(self, symbols):
            super().__init__()
            self.symbols = symbols

        def forward(self, species: torch.Tensor) -> list[str]:
            out: list[str] = []
            for x in species:
                out.append(self.symbols[x.item()])
            return out
    """
    assert codes(src) == set()
    assert codes(src.replace("-> list[str]", "-> dict[str, torch.Tensor]"))  # a dict keyed by text: still a model
    assert codes(src.replace("-> list[str]", "-> Optional[List[int]]"))


def test_a_configuration_field_is_a_python_setting():
    src = """
    class CodebookEmbeddings(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.num_codebooks = config.num_codebooks
            self.embed_tokens = nn.ModuleList([nn.Embedding(16, 8) for _ in range(config.num_codebooks)])

        def forward(self, input_ids):
            input = input_ids.reshape(-1, self.num_codebooks, input_ids.shape[-1])
            bsz, num_codebooks, seq_len = input.shape
            return sum([self.embed_tokens[k](input[:, k]) for k in range(num_codebooks)])
    """
    assert codes(src) == set()
    # the sequence axis is the input's: a loop over it still unrolls a dynamic dim
    assert (11, "EXL022") in codes(src.replace("for k in range(num_codebooks)", "for k in range(seq_len)"))


def test_an_arm_adapting_another_input_type_than_annotated_is_inert():
    src = """
    import warnings

    class Ensemble(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 1)

        def forward(self, elem_idxs: torch.Tensor, aevs: torch.Tensor | None = None) -> torch.Tensor:
            if not (torch.jit.is_scripting() or torch.compiler.is_compiling()):
                if isinstance(elem_idxs, tuple):
                    warnings.warn("this signature is deprecated")
                    return self(elem_idxs[0], elem_idxs[1])
                if aevs is not None and aevs.shape[0] == 0:
                    raise ValueError("empty")
            return self.lin(aevs)
    """
    assert codes(src) == set()
    # unannotated, the tuple arm may be what an exported call passes: the predicate splits the paths
    assert (10, "EXL060") in codes(src.replace("elem_idxs: torch.Tensor", "elem_idxs"))


def test_target_values_are_training_targets():
    src = """
    class Regression(nn.Module):
        def __init__(self):
            super().__init__()
            self.head = nn.Linear(8, 2)

        def forward(self, past_values, target_values: torch.Tensor | None = None, return_loss: bool = True):
            y_hat = self.head(past_values)
            loss = None
            if target_values is not None and return_loss is True:
                if torch.any(target_values < 0):
                    raise Exception("negative targets")
                loss = (y_hat - target_values).abs().mean()
            return y_hat, loss
    """
    assert codes(src) == set()
    assert (11, "EXL020") in codes(src.replace("target_values", "mask_values"))


def test_a_flash_attention_arm_needs_a_non_default_attention_kernel():
    src = """
    class Decoder(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.config = config
            self.proj = nn.Linear(8, 8)

        def forward(self, hidden, attention_mask: torch.Tensor | None = None):
            if self.config._attn_implementation == "flash_attention_2":
                if attention_mask is not None and 0.0 in attention_mask:
                    return self.proj(hidden)
            return self.proj(hidden) * 2
    """
    found = [d for d in lint(src) if d.code == "EXL020"]
    assert [(d.line - 3, d.severity) for d in found] == [(10, Severity.INFO)]
    assert "_attn_implementation" in found[0].hint
    kept = [d for d in lint(src.replace('self.config._attn_implementation == "flash_attention_2"', "hidden.shape[0] > 0")) if d.code == "EXL020"]
    assert [d.severity for d in kept] == [Severity.ERROR]
