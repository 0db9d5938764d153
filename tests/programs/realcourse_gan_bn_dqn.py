"""Short single-file tutorial scripts of English courses, condensed: a conditional GAN on parabola "paintings"
whose discriminator and generator losses share one graph (`retain_graph=True`) and whose generator step after the
discriminator's update hits the in-place version error that torch >= 1.5 raises; a deep tanh net with and without
BatchNorm1d layers registered by `setattr` (in float64), normal/constant init, eval-mode test losses and running
statistics; a DQN whose replay memory is a NumPy array, Q(s, a) by `gather`, targets by `max(1)[0].view`, the
target net refreshed by `load_state_dict`, and epsilon-greedy actions from `torch.max(q, 1)[1].data.numpy()[0]`; a
VAE trained with `binary_cross_entropy(size_average=False)` and an analytic KL. Seeded with `torch.manual_seed` and
NumPy."""
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.data as Data
from torch.nn import init

warnings.simplefilter("ignore")
torch.manual_seed(5)
rng = np.random.RandomState(5)

# ---- conditional GAN on parabolas a*x^2 + (a-1), the class being a > 1.5
B, IDEAS, POINTS = 32, 4, 12
grid = np.vstack([np.linspace(-1, 1, POINTS) for _ in range(B)])


def real_batch():
    a = rng.uniform(1, 2, size=B)[:, np.newaxis]
    return torch.from_numpy(a * grid ** 2 + (a - 1)).float(), torch.from_numpy(((a - 1) > 0.5).astype(np.float32))


G = nn.Sequential(nn.Linear(IDEAS + 1, 32), nn.ReLU(), nn.Linear(32, POINTS))
D = nn.Sequential(nn.Linear(POINTS + 1, 32), nn.ReLU(), nn.Linear(32, 1), nn.Sigmoid())
opt_D = torch.optim.Adam(D.parameters(), lr=1e-3)
opt_G = torch.optim.Adam(G.parameters(), lr=1e-3)
for step in range(30):
    paintings, labels = real_batch()
    fake = G(torch.cat((torch.randn(B, IDEAS), labels), 1))
    p_real = D(torch.cat((paintings, labels), 1))
    p_fake = D(torch.cat((fake, labels), 1))
    D_loss = -torch.mean(torch.log(p_real) + torch.log(1. - p_fake))
    G_loss = torch.mean(torch.log(1. - p_fake))
    opt_G.zero_grad()
    G_loss.backward(retain_graph=True)      # (the generator first: D's weights are still the saved ones)
    opt_D.zero_grad()
    D_loss.backward()
    opt_G.step()
    opt_D.step()
    if step % 10 == 0:
        print("D accuracy=%.4f score=%.4f class=%i" % (p_real.data.numpy().mean(), -D_loss.data.numpy(),  # noqa: UP031
                                                      int(labels.data[0, 0])))
paintings, labels = real_batch()
p_fake = D(torch.cat((G(torch.cat((torch.randn(B, IDEAS), labels), 1)), labels), 1))
D_loss = -torch.mean(torch.log(1. - p_fake))
opt_D.zero_grad()
D_loss.backward(retain_graph=True)
opt_D.step()
try:
    torch.mean(torch.log(1. - p_fake)).backward()
except RuntimeError as e:
    print(str(e).split(":")[0])
print(G(torch.cat((torch.randn(1, IDEAS), torch.FloatTensor([[1.]])), 1)).data.numpy()[0][:4])

# ---- tanh net with and without batch norm
x = np.linspace(-7, 10, 256)[:, np.newaxis]
y = np.square(x) - 5 + rng.normal(0, 2, x.shape)
tx = np.linspace(-7, 10, 50)[:, np.newaxis]
ty = np.square(tx) - 5
# (in float64: saturated tanh units under BatchNorm amplify float32 rounding from epoch to epoch)
loader = Data.DataLoader(Data.TensorDataset(torch.from_numpy(x), torch.from_numpy(y)), batch_size=32, shuffle=True)
tx, ty = torch.from_numpy(tx), torch.from_numpy(ty)


class Deep(nn.Module):
    def __init__(self, bn, layers=5):
        super().__init__()
        self.bn, self.fcs, self.bns = bn, [], []
        self.bn_input = nn.BatchNorm1d(1, momentum=0.5)
        for i in range(layers):
            fc = nn.Linear(1 if i == 0 else 8, 8)
            setattr(self, "fc%i" % i, fc)  # noqa: UP031
            init.normal_(fc.weight, mean=0., std=.3)
            init.constant_(fc.bias, -0.2)
            self.fcs.append(fc)
            if bn:
                norm = nn.BatchNorm1d(8, momentum=0.5)
                setattr(self, "bn%i" % i, norm)  # noqa: UP031
                self.bns.append(norm)
        self.predict = nn.Linear(8, 1)

    def forward(self, x):
        if self.bn:
            x = self.bn_input(x)
        for i, fc in enumerate(self.fcs):
            x = fc(x)
            if self.bn:
                x = self.bns[i](x)
            x = torch.tanh(x)
        return self.predict(x)


nets = [Deep(False).double(), Deep(True).double()]
opts = [torch.optim.SGD(n.parameters(), lr=0.002, momentum=0.9) for n in nets]
for epoch in range(3):
    for net in nets:
        net.eval()
        print("epoch", epoch, "bn" if net.bn else "plain", nn.MSELoss()(net(tx), ty).data.item())
        net.train()
    for bx, by in loader:
        for net, opt in zip(nets, opts):
            loss = nn.MSELoss()(net(bx), by)
            opt.zero_grad()
            loss.backward()
            opt.step()
print(nets[1].bn_input.running_mean, nets[1].bn2.running_var[:3], nets[1].bn2.num_batches_tracked,
      len(list(nets[1].parameters())))

# ---- DQN on a toy chain: move left/right, reward at the right end
N_STATES, N_ACTIONS, CAP, BATCH = 3, 2, 64, 16


class QNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(N_STATES, 10)
        self.fc1.weight.data.normal_(0, 0.1)
        self.out = nn.Linear(10, N_ACTIONS)
        self.out.weight.data.normal_(0, 0.1)

    def forward(self, x):
        return self.out(F.relu(self.fc1(x)))


def observe(pos):
    return np.array([pos / 5.0, float(pos == 5), 1.0])


eval_net, target_net = QNet(), QNet()
memory, counter, learn_steps = np.zeros((CAP, N_STATES * 2 + 2)), 0, 0
opt = torch.optim.Adam(eval_net.parameters(), lr=0.01)
for episode in range(12):
    pos, ret = 0, 0.
    for t in range(15):
        s = observe(pos)
        if rng.uniform() < 0.8:
            q = eval_net.forward(torch.unsqueeze(torch.FloatTensor(s), 0))
            a = torch.max(q, 1)[1].data.numpy()[0]
        else:
            a = rng.randint(0, N_ACTIONS)
        pos = min(5, max(0, pos + (1 if a == 1 else -1)))
        r = 1.0 if pos == 5 else -0.05
        memory[counter % CAP, :] = np.hstack((s, [a, r], observe(pos)))
        counter += 1
        ret += r
        if counter > CAP:
            if learn_steps % 20 == 0:
                target_net.load_state_dict(eval_net.state_dict())
            learn_steps += 1
            m = memory[rng.choice(CAP, BATCH), :]
            b_s = torch.FloatTensor(m[:, :N_STATES])
            b_a = torch.LongTensor(m[:, N_STATES:N_STATES + 1].astype(int))
            b_r = torch.FloatTensor(m[:, N_STATES + 1:N_STATES + 2])
            b_s_ = torch.FloatTensor(m[:, -N_STATES:])
            q_eval = eval_net(b_s).gather(1, b_a)
            q_target = b_r + 0.9 * target_net(b_s_).detach().max(1)[0].view(BATCH, 1)
            loss = nn.MSELoss()(q_eval, q_target)
            opt.zero_grad()
            loss.backward()
            opt.step()
        if pos == 5:
            break
    if counter > CAP:
        print("episode", episode, "return", round(ret, 2), "loss", loss.item())

# ---- VAE with a summed BCE and the closed-form KL
data = (torch.rand(64, 20) > 0.5).float()


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = nn.Linear(20, 16), nn.Linear(16, 3), nn.Linear(16, 3)
        self.fc4, self.fc5 = nn.Linear(3, 16), nn.Linear(16, 20)

    def forward(self, x):
        h = F.relu(self.fc1(x))
        mu, log_var = self.fc2(h), self.fc3(h)
        z = mu + torch.randn_like(mu) * torch.exp(log_var / 2)
        return F.sigmoid(self.fc5(F.relu(self.fc4(z)))), mu, log_var


vae = VAE()
opt = torch.optim.Adam(vae.parameters(), lr=1e-2)
for step in range(6):
    for i in range(0, 64, 16):
        x = data[i:i + 16]
        rec, mu, log_var = vae(x)
        bce = F.binary_cross_entropy(rec, x, size_average=False)
        kl = -0.5 * torch.sum(1 + log_var - mu.pow(2) - log_var.exp())
        opt.zero_grad()
        (bce + kl).backward()
        opt.step()
    if step % 2 == 0:
        print("vae step {} reconst {:.4f} kl {:.4f}".format(step, bce.item(), kl.item()))  # noqa: UP032
with torch.no_grad():
    sample = F.sigmoid(vae.fc5(F.relu(vae.fc4(torch.randn(2, 3)))))
print(sample.view(-1, 1, 4, 5).shape, sample.mean().item())
