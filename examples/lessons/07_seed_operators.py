"""The seed's operator classes: g = exp(a*b + c*d), forward by composition, backward by hand.

Each operator remembers its inputs in forward; backward turns the gradient of its output into those of its
inputs. You are the engine: call the backwards in reverse order. One instance per use — a shared instance
remembers only its last call (the seed's example shares one ``multiply_op``: fine for g, not for backward).
"""

import _path  # noqa: F401

from tapegrad.scalar import Value
from tapegrad.scalar.ops import add, exponential, multiply

a, b, c, d = 2, 3, 2, 2
multiply_op = multiply()
add_op = add()
exp_op = exponential()
g = exp_op(add_op(multiply_op(a, b), multiply_op(c, d)))
print("g:", g)   # 22026.465794806718

# backward by hand, one operator per use
m1, m2, s, e = multiply(), multiply(), add(), exponential()
g = e(s(m1(a, b), m2(c, d)))
dg_ds = e.backward(1.0)
dg_dab, dg_dcd = s.backward(dg_ds)
dg_da, dg_db = m1.backward(dg_dab)
dg_dc, dg_dd = m2.backward(dg_dcd)
print(f"by hand : dg/da={dg_da:.4f} dg/db={dg_db:.4f} dg/dc={dg_dc:.4f} dg/dd={dg_dd:.4f}")

A, B, C, D = (Value(v) for v in (a, b, c, d))
G = (A * B + C * D).exp()
G.backward()
print(f"autograd: dg/da={A.grad:.4f} dg/db={B.grad:.4f} dg/dc={C.grad:.4f} dg/dd={D.grad:.4f}")
print("shared multiply_op remembers only its last inputs:", (multiply_op.x, multiply_op.y))
