import numpy as np, torch, torch.nn as nn
rng = np.random.default_rng(2)
G = nn.Sequential(nn.Linear(4, 16), nn.LeakyReLU(0.2), nn.Linear(16, 2))
D = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
for mod in (G, D):
    for p in mod.parameters():
        with torch.no_grad(): p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape)).astype('float32') * 0.3))
oG = torch.optim.Adam(G.parameters(), lr=2e-3, betas=(0.5, 0.999)); oD = torch.optim.Adam(D.parameters(), lr=2e-3, betas=(0.5, 0.999))
crit = nn.BCEWithLogitsLoss()
real = torch.from_numpy(rng.standard_normal((64, 2)).astype('float32')) + torch.tensor([2.0, -1.0])
for it in range(5):
    z = torch.from_numpy(rng.standard_normal((64, 4)).astype('float32'))
    fake = G(z)
    dl = crit(D(real), torch.ones(64, 1)) + crit(D(fake.detach()), torch.zeros(64, 1))
    oD.zero_grad(); dl.backward(); oD.step()
    gl = crit(D(fake), torch.ones(64, 1))
    oG.zero_grad(); gl.backward(); oG.step()
    # gradient penalty
    alpha = torch.rand(64, 1) * 0 + 0.5
    inter = (alpha * real + (1 - alpha) * fake.detach()).requires_grad_(True)
    gr, = torch.autograd.grad(D(inter).sum(), inter, create_graph=True)
    gp = ((gr.norm(2, dim=1) - 1) ** 2).mean()
    print(it, f"{dl.item():.5f} {gl.item():.5f} {gp.item():.5f}")
