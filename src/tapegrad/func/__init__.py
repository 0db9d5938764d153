"""tapegrad.func: torch.func's composable function transforms (grad, vjp, jvp, jacrev, jacfwd, hessian, vmap,
functional_call), built on the one op mechanism: each transform is an ``Interpreter`` (autograd/function.py)
or plain reverse mode over the recorded graph.

The modules: ``_reverse`` (grad, grad_and_value, vjp, jacrev), ``_forward`` (jvp, jacfwd, linearize, hessian),
``_vmap`` and ``batching/`` (vmap and its batching rules per op family), ``_module`` (functional_call,
stack_module_state).
"""

from ._extras import debug_unwrap, functionalize, replace_all_batch_norm_modules_
from ._forward import hessian, jacfwd, jvp, linearize
from ._module import functional_call, stack_module_state
from ._reverse import grad, grad_and_value, jacrev, vjp
from ._vmap import vmap

__all__ = ["grad", "grad_and_value", "vjp", "jacrev", "jvp", "jacfwd", "linearize", "hessian", "vmap",
           "functional_call", "stack_module_state", "functionalize", "replace_all_batch_norm_modules_", "debug_unwrap"]
