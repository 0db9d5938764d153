"""Image-to-image GANs and style transfer as the single-file GAN collections write them: a WGAN-GP critic step
(the gradient penalty through autograd.grad with create_graph), a pix2pix generator (strided convs, InstanceNorm,
dropout, ConvTranspose2d skips, Upsample + ZeroPad2d head) with a PatchGAN discriminator, CycleGAN's residual
generator (ReflectionPad2d), a replay buffer, LambdaLR decay and the legacy ``Tensor = torch.FloatTensor``
idiom; then Gatys style transfer with Gram matrices, LBFGS on the image with a clamping closure."""
import itertools
import random

import numpy as np
import torch
import torch.autograd as autograd
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable

torch.manual_seed(0)
np.random.seed(0)
random.seed(0)
Tensor = torch.FloatTensor


def weights_init_normal(m):
    name = m.__class__.__name__
    if name.find("Conv") != -1:
        torch.nn.init.normal_(m.weight.data, 0.0, 0.02)
        if getattr(m, "bias", None) is not None:
            torch.nn.init.constant_(m.bias.data, 0.0)


# --- WGAN-GP ------------------------------------------------------------------------------------------------------
critic = nn.Sequential(nn.Linear(16, 32), nn.LeakyReLU(0.2, inplace=True), nn.Linear(32, 1))
gen = nn.Sequential(nn.Linear(4, 32), nn.BatchNorm1d(32, 0.8), nn.LeakyReLU(0.2, inplace=True), nn.Linear(32, 16),
                    nn.Tanh())
opt_c = torch.optim.Adam(critic.parameters(), lr=1e-3, betas=(0.5, 0.999))
opt_g = torch.optim.Adam(gen.parameters(), lr=1e-3, betas=(0.5, 0.999))
real = Tensor(np.random.uniform(-1, 1, (8, 16)))
for it in range(3):
    z = Variable(Tensor(np.random.normal(0, 1, (8, 4))))
    fake = gen(z)
    alpha = Tensor(np.random.random((8, 1)))
    inter = (alpha * real + (1 - alpha) * fake.data).requires_grad_(True)
    grads = autograd.grad(outputs=critic(inter), inputs=inter, grad_outputs=Tensor(8, 1).fill_(1.0),
                          create_graph=True, retain_graph=True, only_inputs=True)[0]
    gp = ((grads.view(grads.size(0), -1).norm(2, dim=1) - 1) ** 2).mean()
    d_loss = -torch.mean(critic(real)) + torch.mean(critic(fake.detach())) + 10 * gp
    opt_c.zero_grad()
    d_loss.backward()
    opt_c.step()
    opt_g.zero_grad()
    g_loss = -torch.mean(critic(gen(z)))
    g_loss.backward()
    opt_g.step()
    print("wgan-gp", it, f"{d_loss.item():.5f}", f"{gp.item():.5f}", f"{g_loss.item():.5f}")


# --- pix2pix ------------------------------------------------------------------------------------------------------
class Down(nn.Module):
    def __init__(self, cin, cout, normalize=True, dropout=0.0):
        super().__init__()
        layers = [nn.Conv2d(cin, cout, 4, 2, 1, bias=False)]
        if normalize:
            layers.append(nn.InstanceNorm2d(cout))
        layers.append(nn.LeakyReLU(0.2))
        if dropout:
            layers.append(nn.Dropout(dropout))
        self.model = nn.Sequential(*layers)

    def forward(self, x):
        return self.model(x)


class Up(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.model = nn.Sequential(nn.ConvTranspose2d(cin, cout, 4, 2, 1, bias=False), nn.InstanceNorm2d(cout),
                                   nn.ReLU(inplace=True))

    def forward(self, x, skip):
        return torch.cat((self.model(x), skip), 1)


class GeneratorUNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.d1, self.d2, self.d3 = Down(3, 8, normalize=False), Down(8, 16), Down(16, 16, normalize=False, dropout=0.5)
        self.u1, self.u2 = Up(16, 16), Up(32, 8)
        self.final = nn.Sequential(nn.Upsample(scale_factor=2), nn.ZeroPad2d((1, 0, 1, 0)), nn.Conv2d(16, 3, 4, padding=1),
                                   nn.Tanh())

    def forward(self, x):
        d1 = self.d1(x)
        d2 = self.d2(d1)
        return self.final(self.u2(self.u1(self.d3(d2), d2), d1))


patch_d = nn.Sequential(nn.Conv2d(6, 8, 4, 2, 1), nn.LeakyReLU(0.2, inplace=True), nn.ZeroPad2d((1, 0, 1, 0)),
                        nn.Conv2d(8, 1, 4, padding=1, bias=False))
g = GeneratorUNet()
for m in (g, patch_d):
    m.apply(weights_init_normal)
opt_pg = torch.optim.Adam(g.parameters(), lr=2e-4, betas=(0.5, 0.999))
a_img, b_img = Tensor(np.random.uniform(-1, 1, (2, 3, 16, 16))), Tensor(np.random.uniform(-1, 1, (2, 3, 16, 16)))
for it in range(2):
    fake_b = g(a_img)
    pred = patch_d(torch.cat((fake_b, a_img), 1))
    valid = Variable(Tensor(np.ones(pred.shape)), requires_grad=False)
    loss_g = F.mse_loss(pred, valid) + 100 * F.l1_loss(fake_b, b_img)
    opt_pg.zero_grad()
    loss_g.backward()
    opt_pg.step()
    print("pix2pix", it, tuple(pred.shape), f"{loss_g.item():.5f}")


# --- CycleGAN pieces ----------------------------------------------------------------------------------------------
class ResidualBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.block = nn.Sequential(nn.ReflectionPad2d(1), nn.Conv2d(c, c, 3, bias=False), nn.InstanceNorm2d(c),
                                   nn.ReLU(inplace=True), nn.ReflectionPad2d(1), nn.Conv2d(c, c, 3, bias=False),
                                   nn.InstanceNorm2d(c))

    def forward(self, x):
        return x + self.block(x)


class ReplayBuffer:
    def __init__(self, max_size=3):
        self.max_size, self.data = max_size, []

    def push_and_pop(self, data):
        out = []
        for element in data.data:
            element = torch.unsqueeze(element, 0)
            if len(self.data) < self.max_size:
                self.data.append(element)
                out.append(element)
            elif random.uniform(0, 1) > 0.5:
                i = random.randint(0, self.max_size - 1)
                out.append(self.data[i].clone())
                self.data[i] = element
            else:
                out.append(element)
        return Variable(torch.cat(out))


G_AB = nn.Sequential(nn.ReflectionPad2d(3), nn.Conv2d(3, 8, 7, bias=False), nn.InstanceNorm2d(8), nn.ReLU(True),
                     ResidualBlock(8), nn.ReflectionPad2d(3), nn.Conv2d(8, 3, 7), nn.Tanh())
G_BA = nn.Sequential(nn.ReflectionPad2d(1), nn.Conv2d(3, 3, 3), nn.Tanh())
opt_cg = torch.optim.Adam(itertools.chain(G_AB.parameters(), G_BA.parameters()), lr=2e-4, betas=(0.5, 0.999))
sched = torch.optim.lr_scheduler.LambdaLR(opt_cg, lr_lambda=lambda e: 1.0 - max(0, e - 1) / 2)
buf = ReplayBuffer()
for epoch in range(3):
    x = Variable(a_img.type(torch.Tensor))
    fake = G_AB(x)
    loss = F.l1_loss(G_BA(fake), x) * 10 + F.l1_loss(G_AB(b_img), b_img) * 5
    opt_cg.zero_grad()
    loss.backward()
    opt_cg.step()
    sched.step()
    popped = buf.push_and_pop(fake)
    print("cyclegan", epoch, f"{loss.item():.5f}", sched.get_last_lr(), tuple(popped.shape), f"{popped.sum().item():.3f}")


# --- style transfer with LBFGS ------------------------------------------------------------------------------------
def gram_matrix(x):
    a, b, c, d = x.size()
    f = x.view(a * b, c * d)
    return torch.mm(f, f.t()).div(a * b * c * d)


def gram_bmm(y):
    b, ch, h, w = y.size()
    f = y.view(b, ch, w * h)
    return f.bmm(f.transpose(1, 2)) / (ch * h * w)


features = nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.ReLU(inplace=False), nn.MaxPool2d(2, 2),
                         nn.Conv2d(6, 8, 3, padding=1), nn.ReLU(inplace=False)).eval()
for p in features.parameters():
    p.requires_grad_(False)
content = torch.rand(1, 3, 12, 12)
style = torch.rand(1, 3, 12, 12)
mean, std = torch.tensor([0.485, 0.456, 0.406]).view(-1, 1, 1), torch.tensor([0.229, 0.224, 0.225]).view(-1, 1, 1)
style_targets = [gram_matrix(features[:k]((style - mean) / std)).detach() for k in (2, 5)]
content_target = features((content - mean) / std).detach()
img = content.clone()
optimizer = torch.optim.LBFGS([img.requires_grad_()], max_iter=5)
run = [0]
for outer in range(2):
    def closure():
        img.data.clamp_(0, 1)
        optimizer.zero_grad()
        x = (img - mean) / std
        s_loss = sum(F.mse_loss(gram_matrix(features[:k](x)), t) for k, t in zip((2, 5), style_targets))
        c_loss = F.mse_loss(features(x), content_target)
        loss = 1000 * s_loss + c_loss
        loss.backward()
        run[0] += 1
        return loss
    last = optimizer.step(closure)
    print("style", outer, run[0], f"{last.item():.5f}")
img.data.clamp_(0, 1)
print("gram", tuple(gram_bmm(features(img.detach().repeat(2, 1, 1, 1))).shape), f"{img.mean().item():.5f}")

# the classic mistake: the critic's optimizer steps before the generator's loss (made through it) is backpropagated
g_loss = -torch.mean(critic(gen(z)))
d_loss = -torch.mean(critic(real))
opt_c.zero_grad()
d_loss.backward()
opt_c.step()
try:
    g_loss.backward()
except RuntimeError as e:
    print(str(e).split(" Hint:")[0].split(": ", 1)[1])
