"""torch.func's model-ensembling tutorial, condensed, with the meta device where real programs use it: the
stacked models' base is ``copy.deepcopy(models[0]).to('meta')`` called through ``functional_call`` under
``vmap`` (same minibatch and different minibatches); a model built under ``with torch.device('meta')`` and
materialised by ``to_empty`` + ``load_state_dict(assign=True)``; shape inference with ``empty``/``empty_like`` on
meta. Seeded by torch."""

import copy

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, stack_module_state, vmap

torch.manual_seed(0)


class SimpleMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 128)
        self.fc2 = nn.Linear(128, 128)
        self.fc3 = nn.Linear(128, 10)

    def forward(self, x):
        x = x.flatten(1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


num_models = 5
data = torch.randn(100, 64, 1, 28, 28)
targets = torch.randint(10, (6400,))
models = [SimpleMLP() for _ in range(num_models)]

minibatches = data[:num_models]
predictions_diff_minibatch_loop = [model(minibatch) for model, minibatch in zip(models, minibatches)]
minibatch = data[0]
predictions2 = [model(minibatch) for model in models]

params, buffers = stack_module_state(models)
base_model = copy.deepcopy(models[0])
base_model = base_model.to("meta")
print("base on", base_model.fc1.weight.device, base_model.fc1.weight.is_meta, tuple(base_model.fc1.weight.shape))
print("stacked", {k: tuple(v.shape) for k, v in params.items()})


def fmodel(params, buffers, x):
    return functional_call(base_model, (params, buffers), (x,))


predictions1_vmap = vmap(fmodel)(params, buffers, minibatches)
print("vmap different minibatches", predictions1_vmap.shape)
for i in range(num_models):
    print(i, [[round(v, 3) for v in row] for row in predictions1_vmap[i][:2, :4].tolist()])
print("agree loop", torch.allclose(predictions1_vmap, torch.stack(predictions_diff_minibatch_loop), atol=1e-3, rtol=1e-5))

predictions2_vmap = vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatch)
print("vmap same minibatch", [round(v, 2) for v in predictions2_vmap.sum(dim=(1, 2)).tolist()])
print("agree loop", torch.allclose(predictions2_vmap, torch.stack(predictions2), atol=1e-3, rtol=1e-5))

# gradients of the stacked parameters through the meta base (torch.func.grad under vmap)
def loss(params, buffers, x, y):
    return F.cross_entropy(fmodel(params, buffers, x), y)


grads = vmap(torch.func.grad(loss), in_dims=(0, 0, 0, None))(params, buffers, minibatches[:, :8], targets[:8])
print("grad norms", [round(g.norm().item(), 3) for g in grads.values()])

# low-memory init: build on meta, materialise, load the weights in place
with torch.device("meta"):
    lazy = SimpleMLP()
print("lazy", lazy.fc2.weight.device, lazy.fc2.weight.requires_grad, lazy)
lazy.to_empty(device="cpu")
lazy.load_state_dict(models[1].state_dict(), assign=True)
print("loaded", lazy.fc2.weight.device, [[round(v, 3) for v in r] for r in lazy(minibatch)[:3, :3].tolist()])

# shape inference on meta: no data, shapes and dtypes only
x = torch.empty(7, 1, 28, 28, device="meta")
out = models[0].to("meta")(x)
print("meta out", out.device, tuple(out.shape), out.dtype, repr(out))
print("meta like", repr(torch.empty_like(minibatch, device="meta").sum(0)))
