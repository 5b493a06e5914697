"""Families held-out round 19 showed (compressai, styletts2, lightning-bolts, taming-transformers) and the
main corpus's ESMFold chunk loop, each fixed once in the shared dataflow or root selection; shapes taken
from that code, not copied."""

from __future__ import annotations

import textwrap

import libcst as cst

from exportlint.analysis import code_facts
from exportlint.analysis.index import FileIndex
from snippets import codes, lint


def test_a_size_read_through_a_transposed_list_of_shapes_counts_a_loop():
    src = """
    def _fetch_dims(tree: dict | list | tuple | torch.Tensor) -> list[tuple[int, ...]]:
        shapes = []
        if isinstance(tree, dict):
            for v in tree.values():
                shapes.extend(_fetch_dims(v))
        elif isinstance(tree, torch.Tensor):
            shapes.append(tree.shape)
        return shapes

    class Chunked(nn.Module):
        def __init__(self, chunk_size: int = 4):
            super().__init__()
            self.chunk_size = chunk_size

        def forward(self, x):
            initial_dims = [shape[:1] for shape in _fetch_dims({"x": x})]
            batch_dims = tuple(max(s) for s in zip(*initial_dims))
            flat = 1
            for d in batch_dims:
                flat *= d
            no_chunks = flat // self.chunk_size + (flat % self.chunk_size != 0)
            outs = []
            for i in range(no_chunks):
                outs.append(x[i * self.chunk_size:(i + 1) * self.chunk_size] * 2)
            return torch.cat(outs)
    """
    # measured: torch.export with Dim.AUTO on dim 0 unrolls the loop and rejects any other batch size
    assert (24, "EXL022") in codes(src)
    # a list of sizes known only by its annotation (the recursive call) holds no tensors to unroll
    assert not any(code == "EXL010" for _, code in codes(src))


def test_a_forward_taking_a_function_is_no_export_root():
    src = """
    from typing import Callable

    class Sampler(nn.Module):
        def forward(self, noise: torch.Tensor, fn: Callable, sigmas: torch.Tensor, num_steps: int) -> torch.Tensor:
            x = sigmas[0] * noise
            for i in range(num_steps - 1):
                x = fn(x, sigma=sigmas[i])
                if sigmas[i + 1].item() > 0:
                    x = x * 2
            return x

    class Stepper(nn.Module):
        def forward(self, x, denoise):
            if x.sum() > 0:
                x = denoise(x)
            return x
    """
    assert codes(src) == set()  # no exporter can be handed `fn` / `denoise`: a driver loop, run eagerly
    assert codes(src.replace("fn: Callable", "fn: torch.Tensor").replace("x = fn(x, sigma=sigmas[i])", "x = x + fn")) != set()


def test_a_none_default_only_tested_is_a_setting():
    src = """
    class Quantizer(nn.Module):
        def __init__(self, n_e, remap=None):
            super().__init__()
            self.embedding = nn.Embedding(n_e, 4)
            self.remap = remap
            if self.remap is not None:
                self.register_buffer("used", torch.load(self.remap))

        def remap_to_used(self, inds):
            match = (inds[:, :, None] == self.used[None, None, ...]).long()
            new = match.argmax(-1)
            unknown = match.sum(2) < 1
            new[unknown] = torch.randint(0, 3, size=new[unknown].shape)
            return new

        def forward(self, z):
            idx = torch.cdist(z, self.embedding.weight[None]).argmin(-1)
            if self.remap is not None:
                idx = self.remap_to_used(idx)
            return idx
    """
    found = lint(src)
    assert [d.code for d in found] == ["EXL032"]
    assert "only runs with a non-default `remap` (default None)" in found[0].hint
    # a part built elsewhere and called is no setting: `self.remap(...)` would make it one
    called = src.replace("idx = self.remap_to_used(idx)", "idx = self.remap(self.remap_to_used(idx))")
    assert "non-default" not in lint(called)[0].hint


def test_the_second_name_of_an_image_layout_is_its_channels():
    src = """
    class DetectionLayer(nn.Module):
        def __init__(self, num_classes: int, prior_shapes: list):
            super().__init__()
            self.num_classes = num_classes
            self.prior_shapes = prior_shapes

        def forward(self, x):
            batch_size, num_features, height, width = x.shape
            num_attrs = self.num_classes + 5
            anchors_per_cell = int(torch.div(num_features, num_attrs, rounding_mode="floor"))
            if anchors_per_cell != len(self.prior_shapes):
                raise ValueError("bad head")
            x = x.permute(0, 2, 3, 1).reshape(batch_size, height * width * anchors_per_cell, num_attrs)
            return x
    """
    assert codes(src) == set()  # measured: batch and H/W stay dynamic, the channel count is the head's
    # the same code reading a spatial size does convert a tensor built from a dynamic one
    assert (11, "EXL003") in codes(src.replace("torch.div(num_features,", "torch.div(height,"))


def test_distributed_training_code_is_not_reported():
    src = """
    import torch.distributed as dist

    def concat_all_gather(tensor):
        gathered = [torch.ones_like(tensor) for _ in range(dist.get_world_size())]
        dist.all_gather(gathered, tensor, async_op=False)
        return torch.cat(gathered, dim=0)

    class Moco(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = nn.Linear(4, 4)

        def _batch_shuffle_ddp(self, x):
            x_gather = concat_all_gather(x)
            idx_shuffle = torch.randperm(x_gather.shape[0]).cuda()
            torch.distributed.broadcast(idx_shuffle, src=0)
            return x_gather[idx_shuffle]

        def forward(self, x, use_ddp: bool = True):
            if use_ddp:
                x = self._batch_shuffle_ddp(x)
            return self.enc(x)
    """
    assert codes(src) == set()
    plain = src.replace("torch.distributed.broadcast(idx_shuffle, src=0)", "pass")
    assert (16, "EXL051") in codes(plain)
    # a collective only training runs says nothing of the rest of the forward (Coqui XTTS' DVAE quantizer)
    ema = '''
    import torch.distributed as dist

    class Quantize(nn.Module):
        def forward(self, x):
            if self.training and dist.is_initialized():
                dist.all_reduce(x)
            if torch.any(x > 0):
                x = x * 2
            return x
    '''
    assert codes(ema) == {(8, "EXL020")}


def test_an_arm_a_random_draw_decides_is_not_reported():
    src = """
    import random
    import numpy as np

    class Decoder(nn.Module):
        def __init__(self, sampling_probability: float = 0.0):
            super().__init__()
            self.output = nn.Linear(4, 4)
            self.sampling_probability = sampling_probability

        def forward(self, z):
            outs = []
            for i in range(3):
                if i > 0 and random.random() < self.sampling_probability:
                    y = np.argmax(self.output(z).detach().cpu(), axis=1)
                else:
                    y = z
                outs.append(y)
            return outs
    """
    assert codes(src) == set()  # ESPnet's scheduled sampling: every exporter bakes the draw it saw
    assert (15, "EXL050") in codes(src.replace("i > 0 and random.random() < self.sampling_probability", "i > 0"))


def test_a_tensor_of_dims_is_read_as_ints():
    src = """
    class EntropyBottleneck(nn.Module):
        def forward(self, x):
            perm = torch.cat((torch.tensor([1, 0], device=x.device), torch.arange(2, x.ndim, device=x.device)))
            inv_perm = perm
            x = x.permute(*perm).contiguous()
            out = torch.round(x)
            return out.permute(*inv_perm).contiguous()
    """
    # measured (p31): torch.export fails at the first permute even with static shapes
    assert codes(src) == {(6, "EXL003"), (8, "EXL003")}
    assert "stops earlier on this path, at line 9" in [d for d in lint(src) if d.line - 3 == 8][0].hint
    assert codes(src, "trace") == {(6, "EXL010"), (8, "EXL010")}  # jit.trace reads the values it saw
    assert codes(src.replace("*perm", "1, 0, *range(2, x.ndim)").replace("*inv_perm", "1, 0, *range(2, x.ndim)")) == set()


def test_a_lambda_called_in_forward_is_analysed():
    src = """
    class Head(nn.Module):
        def forward(self, x, grid):
            size_of = lambda g: g[0] * g[1]
            n = size_of(grid).item()
            if n > 4:
                return x[:n]
            return x
    """
    assert codes(src) == {(5, "EXL001"), (6, "EXL020")}  # not EXL901: a lambda's body is one expression


def test_exists_of_a_none_default_setting_gates_like_is_not_none():
    src = """
    def exists(val):
        return val is not None

    class Attention(nn.Module):
        def __init__(self, dim, sparse_topk=None):
            super().__init__()
            self.to_q = nn.Linear(dim, dim)
            self.sparse_topk = sparse_topk

        def forward(self, x):
            dots = self.to_q(x) @ x.transpose(-1, -2)
            if exists(self.sparse_topk) and self.sparse_topk < dots.shape[-1]:
                top, _ = dots.topk(self.sparse_topk, dim=-1)
                dots = dots.masked_fill(dots < top[..., -1:], -1e9)
            return dots.softmax(-1)
    """
    found = [d for d in lint(src) if d.code == "EXL022"]
    # tortoise's and x-transformers' top-k attention: off unless `sparse_topk` is given
    assert found and found[0].severity.value == "info" and "non-default `sparse_topk` (default None)" in found[0].hint


def test_a_forward_taking_text_is_no_export_root():
    src = """
    from typing import List

    class LemmaClassifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(100, 8)
            self.vocab = {}

        def forward(self, pos_indices: List[int], sentences: List[List[str]]):
            ids = [torch.tensor([self.vocab.get(w, 0) for w in s]) for s in sentences]
            embedded = self.emb(nn.utils.rnn.pad_sequence(ids, batch_first=True))
            lengths = torch.tensor([len(seq) for seq in embedded])
            return embedded, lengths
    """
    assert codes(src) == set()  # stanza: tensors built from host text have no dim an export could keep dynamic
    assert codes(src.replace("sentences: List[List[str]]", "sentences: torch.Tensor")) != set()


def test_a_part_only_a_non_default_setting_builds_runs_under_that_setting():
    src = """
    class LSTMwRecDropout(nn.Module):
        def __init__(self, d, rec_dropout):
            super().__init__()
            self.cell = nn.LSTMCell(d, d)

        def forward(self, x):
            h = c = torch.zeros_like(x[0])
            outs = []
            for t in range(x.size(0)):
                h, c = self.cell(x[t], (h, c))
                outs.append(h)
            return torch.stack(outs)

    class PackedLSTM(nn.Module):
        def __init__(self, d, rec_dropout=0):
            super().__init__()
            if rec_dropout > 0:
                self.lstm = LSTMwRecDropout(d, rec_dropout)
            else:
                self.lstm = nn.LSTM(d, d)

        def forward(self, x):
            return self.lstm(x)
    """
    loop = [d for d in lint(src) if d.code == "EXL022"]
    # stanza: the hand-written recurrent-dropout LSTM replaces nn.LSTM only with rec_dropout > 0
    assert loop and loop[0].severity.value == "info" and "non-default `rec_dropout` (default 0)" in loop[0].hint
    default_built = src.replace("if rec_dropout > 0:", "if rec_dropout >= 0:")
    assert [d.severity.value for d in lint(default_built) if d.code == "EXL022"] == ["warning"]
    # a builder in the file that turns it on: no default path to name
    built_on = src + """
    class Tagger(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = PackedLSTM(8, rec_dropout=0.33)

        def forward(self, x):
            return self.rnn(x)
    """
    assert [d.severity.value for d in lint(built_on) if d.code == "EXL022"] == ["warning"]



def test_a_setting_a_builder_computes_is_passed_otherwise():
    # SwitchTransformers: `is_sparse = (i % sparse_step == 1) if sparse_step > 0 else False`, then
    # `Block(is_sparse=is_sparse)` hands it on: every other layer is sparse by default, not a non-default path
    src = textwrap.dedent("""
    class LayerFF:
        def __init__(self, is_sparse=False):
            self.is_sparse = is_sparse

    class Block:
        def __init__(self, is_sparse=False):
            self.ff = LayerFF(is_sparse=is_sparse)

    def build(n, sparse_step):
        for i in range(n):
            is_sparse = (i % sparse_step == 1) if sparse_step > 0 else False
            Block(is_sparse=is_sparse)
    """)
    assert code_facts._passed_otherwise(FileIndex("m.py", cst.parse_module(src), text=src), "is_sparse", False)
    handed = src.replace("is_sparse = (i % sparse_step == 1) if sparse_step > 0 else False", "pass")
    assert not code_facts._passed_otherwise(FileIndex("m.py", cst.parse_module(handed), text=handed), "is_sparse", False)


def test_a_data_parallel_wrapper_is_no_export_root():
    src = """
    class DataParallelNet(nn.Module):
        def __init__(self, net):
            super().__init__()
            self.net = nn.DataParallel(net)

        def forward(self, obs):
            if not isinstance(obs, torch.Tensor):
                obs = torch.as_tensor(obs, dtype=torch.float32)
            return self.net(obs=obs.cuda())
    """
    assert codes(src) == set()  # tianshou's multi-GPU wrapper: users export the wrapped network
    assert codes(src.replace("DataParallelNet", "CudaNet")) == {(10, "EXL051")}


def test_a_number_that_sizes_a_python_list_is_read_in_python():
    src = """
    class Chunks(nn.Module):
        def forward(self, x, batch_sizes):
            batch_size = batch_sizes[0].item()
            return torch.cat(x.split([1] * batch_size))
    """
    # measured: `[1] * u0` fails torch.export (GuardOnDataDependentSymNode): not a number only tensor ops use
    (item,) = lint(src)
    assert item.code == "EXL001" and item.severity.value == "warning"
    (only_tensor_ops,) = lint(src.replace("x.split([1] * batch_size)", "x[:batch_size], x[batch_size:]"))
    assert only_tensor_ops.severity.value == "info"
