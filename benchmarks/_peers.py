"""The other autograd engines on NumPy (the issue's "best peers"), for W2 and W3: MyGrad and HIPS autograd.

Informational engines: each is used when installed (``pip install mygrad autograd``, part of the ``bench``
extra) and left out otherwise. They get the same data and initial weights as the others, and their results are
checked against tapegrad's like every engine's. Written in each library's own idiom: MyGrad's tensors and
``backward()``; HIPS autograd's ``grad`` of a function of NumPy arrays.
"""

from __future__ import annotations

import _common as C
import numpy as np

MYGRAD, AUTOGRAD = "MyGrad", "HIPS autograd"


def available():
    """name -> module for the peers that import."""
    out = {}
    try:
        import mygrad
        out[MYGRAD] = mygrad
    except ImportError:
        pass
    try:
        import autograd
        out[AUTOGRAD] = autograd
    except ImportError:
        pass
    return out


# --- W2: the 200-op chain ---------------------------------------------------------------------------------------
def chain(name, x0, a, b, n_ops):
    """A step function returning (output sum, d sum / d x) for the W2 chain on peer ``name``."""
    if name == MYGRAD:
        import mygrad as mg
        from mygrad.nnet.activations import sigmoid

        steps = (lambda y: y + a, lambda y: y * b, mg.tanh, mg.exp, sigmoid)

        def step():
            x = mg.tensor(x0)
            loss = C.cycle(x, n_ops, steps).sum()
            loss.backward()
            return loss.data, x.grad
        return step

    import autograd
    import autograd.numpy as anp

    steps = (lambda y: y + a, lambda y: y * b, anp.tanh, anp.exp, lambda y: 1 / (1 + anp.exp(-y)))

    def f(x):
        return anp.sum(C.cycle(x, n_ops, steps))

    value_and_grad = autograd.value_and_grad(f)

    def step():
        v, g = value_and_grad(x0)
        return np.float32(v), g
    return step


# --- W3: the MLP step -------------------------------------------------------------------------------------------
class PeerMLP:
    """W3's step (forward, cross-entropy, backward, SGD with torch's momentum rule) on peer ``name``; the update
    itself is NumPy on the weights (in place, as the hand-written NumPy engine's), as both libraries leave
    optimizers to the user."""

    def __init__(self, name, state, batches, lr, momentum):
        self.name, self.lr, self.momentum = name, lr, momentum
        self.params = {k: v.copy() for k, v in state.items()}
        self.keys = list(self.params)
        self.n_layers = len(state) // 2
        self.bufs = {}
        self.batches = batches
        self.i = 0
        if name == AUTOGRAD:
            import autograd
            self._grad = autograd.value_and_grad(self._loss_autograd)

    def _loss_autograd(self, ps, x, y):
        import autograd.numpy as anp
        a = x
        for li in range(self.n_layers):
            a = anp.dot(a, ps[2 * li].T) + ps[2 * li + 1]
            if li < self.n_layers - 1:
                a = anp.maximum(a, 0)
        shifted = a - anp.max(a, axis=1, keepdims=True)
        logp = shifted - anp.log(anp.sum(anp.exp(shifted), axis=1, keepdims=True))
        return -anp.mean(logp[np.arange(len(y)), y])

    def _step_mygrad(self, x, y):
        import mygrad as mg
        from mygrad.nnet.activations import relu
        from mygrad.nnet.losses import softmax_crossentropy
        ps = [mg.tensor(self.params[k], copy=False) for k in self.keys]
        a = x
        for li in range(self.n_layers):
            a = mg.matmul(a, ps[2 * li].T) + ps[2 * li + 1]
            if li < self.n_layers - 1:
                a = relu(a)
        loss = softmax_crossentropy(a, y)
        loss.backward()
        return float(loss.data), [p.grad for p in ps]

    def step(self):
        x, y = self.batches[self.i % len(self.batches)]
        self.i += 1
        if self.name == AUTOGRAD:
            loss, grads = self._grad([self.params[k] for k in self.keys], x, y)
        else:
            loss, grads = self._step_mygrad(x, y)
        for k, g in zip(self.keys, grads):
            buf = self.bufs.get(k)
            if buf is None:
                self.bufs[k] = buf = np.array(g, copy=True)
            else:
                buf *= self.momentum
                buf += g
            self.params[k] -= self.lr * buf
        return np.float32(loss)

    def state(self):
        return self.params
