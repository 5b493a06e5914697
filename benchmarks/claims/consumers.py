"""Does the consumer matter? Each conversion form x each consumer, non-strict torch.export with Dim.AUTO (A: L=16, B: L=24).

    python benchmarks/claims/consumers.py
"""
import sys; import os; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch, math, warnings
import torch.nn.functional as F
from torch import nn
from torch.export import Dim

warnings.simplefilter("ignore")
forms = {
 "int(h/4)": lambda h: int(h / 4),
 "floor(h/4)": lambda h: math.floor(h / 4),
 "trunc(h/4)": lambda h: math.trunc(h / 4),
 "ceil(h/4)": lambda h: math.ceil(h / 4),
 "sym_int(h/4)": lambda h: torch.sym_int(h / 4),
 "round(h/4)": lambda h: round(h / 4),
 "int(h*0.25)": lambda h: int(h * 0.25),
 "h//4": lambda h: h // 4,
}
cons = {
 "slice": lambda x, n: x[..., : n * 4],
 "interp": lambda x, n: F.interpolate(x, size=n),
 "zeros+": lambda x, n: x[..., :1] + x.new_zeros(1, 1, n),
 "view": lambda x, n: x[..., : n * 4].reshape(1, 2, n, 4),
}
xa, xb = torch.randn(1, 2, 16), torch.randn(1, 2, 24)
for fn, f in forms.items():
    row = []
    for cn, c in cons.items():
        class M(nn.Module):
            def forward(self, x):
                return c(x, f(x.shape[-1]))
        try:
            ep = torch.export.export(M(), (xa,), dynamic_shapes=({2: Dim.AUTO},))
            try:
                row.append(f"{cn}:{'ok' if torch.allclose(ep.module()(xb), M()(xb)) else 'MISMATCH'}")
            except Exception as e:
                row.append(f"{cn}:{'GUARD' if 'Guard' in str(e) else 'RT'}")
        except Exception as e:
            row.append(f"{cn}:FAIL {type(e).__name__}")
    print(f"{fn:14}", "  ".join(row))
