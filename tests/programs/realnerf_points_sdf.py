"""Point clouds and implicit surfaces, in the style of the PointNet/PointNet++ ports, SIREN and DeepSDF: a T-Net
with the feature-transform regulariser, farthest point sampling, ball query and grouping written in torch, a
chamfer distance by cdist, quaternion and Rodrigues rotations, a SIREN fitted to a sphere's SDF with gradient and
Laplacian by autograd.grad(create_graph=True), and an auto-decoder with a weight-normed MLP, clamped L1 and
max-norm latent codes. Seeded with torch.manual_seed alone."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


# ---- PointNet: input transform and feature-transform regulariser (float32, one eval forward) ----
class TNet(nn.Module):
    def __init__(self, k=3):
        super().__init__()
        self.k = k
        self.conv1, self.conv2 = nn.Conv1d(k, 16, 1), nn.Conv1d(16, 32, 1)
        self.bn1, self.bn2 = nn.BatchNorm1d(16), nn.BatchNorm1d(32)
        self.fc = nn.Linear(32, k * k)

    def forward(self, x):
        b = x.size()[0]
        x = F.relu(self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x))))))
        x = torch.max(x, 2, keepdim=True)[0].view(-1, 32)
        iden = torch.eye(self.k).flatten().view(1, self.k * self.k).repeat(b, 1)
        return (self.fc(x) + iden).view(-1, self.k, self.k)


def transform_reg(trans):
    eye = torch.eye(trans.size()[1])[None, :, :]
    return torch.mean(torch.norm(torch.bmm(trans, trans.transpose(2, 1)) - eye, dim=(1, 2)))


cloud = torch.rand(4, 3, 50)
tnet = TNet().eval()
trans = tnet(cloud)
aligned = torch.bmm(cloud.transpose(2, 1), trans).transpose(2, 1)
print('tnet', tuple(trans.shape), trans.sum().item(), aligned.abs().sum().item(), transform_reg(trans).item())


# ---- PointNet++ sampling and grouping ----
def pairwise_sq(src, dst):
    B, N, _ = src.shape
    _, M, _ = dst.shape
    d = -2 * torch.matmul(src, dst.permute(0, 2, 1))
    d += torch.sum(src ** 2, -1).view(B, N, 1)
    d += torch.sum(dst ** 2, -1).view(B, 1, M)
    return d


def gather_points(points, idx):
    B = points.shape[0]
    view_shape = [B] + [1] * (len(idx.shape) - 1)
    repeat_shape = list(idx.shape)
    repeat_shape[0] = 1
    batch = torch.arange(B, dtype=torch.long).view(view_shape).repeat(repeat_shape)
    return points[batch, idx, :]


def fps(xyz, npoint):
    B, N, C = xyz.shape
    centroids = torch.zeros(B, npoint, dtype=torch.long)
    distance = torch.ones(B, N) * 1e10
    farthest = torch.randint(0, N, (B,), dtype=torch.long)
    batch = torch.arange(B, dtype=torch.long)
    for i in range(npoint):
        centroids[:, i] = farthest
        centroid = xyz[batch, farthest, :].view(B, 1, 3)
        dist = torch.sum((xyz - centroid) ** 2, -1)
        mask = dist < distance
        distance[mask] = dist[mask]
        farthest = torch.max(distance, -1)[1]
    return centroids


def ball_query(radius, nsample, xyz, new_xyz):
    B, N, C = xyz.shape
    _, S, _ = new_xyz.shape
    group = torch.arange(N, dtype=torch.long).view(1, 1, N).repeat([B, S, 1])
    group[pairwise_sq(new_xyz, xyz) > radius ** 2] = N
    group = group.sort(dim=-1)[0][:, :, :nsample]
    first = group[:, :, 0].view(B, S, 1).repeat([1, 1, nsample])
    mask = group == N
    group[mask] = first[mask]
    return group


xyz = torch.rand(2, 64, 3)
centres_idx = fps(xyz, 8)
centres = gather_points(xyz, centres_idx)
groups = ball_query(0.4, 6, xyz, centres)
grouped = gather_points(xyz, groups) - centres.view(2, 8, 1, 3)
print('fps', centres_idx.tolist()[0], 'ball', groups.sum().item(), grouped.abs().sum().item())
try:                               # float32 distances written into a float64 buffer: torch's dtype check
    buf = torch.ones(2, 64, dtype=torch.float64)
    m = torch.rand(2, 64) > 0.5
    buf[m] = torch.rand(2, 64)[m]
except RuntimeError as e:
    print('index put:', e)

# ---- chamfer distance ----
a, b = torch.rand(2, 40, 3, requires_grad=True), torch.rand(2, 30, 3)
d = torch.cdist(a, b)
cham = d.min(dim=2)[0].pow(2).mean() + d.min(dim=1)[0].pow(2).mean()
cham.backward()
print('chamfer', cham.item(), a.grad.abs().sum().item(), pairwise_sq(a.detach(), b).clamp_min(0).sqrt().sub(d).abs().max().item() < 1e-4)


# ---- rotations ----
def quat_to_mat(q):
    q = F.normalize(q, dim=-1)
    w, x, y, z = q.unbind(-1)
    return torch.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
                        2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                        2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1).view(q.shape[:-1] + (3, 3))


def rodrigues(r):
    theta = r.norm(dim=-1, keepdim=True).clamp_min(1e-8)
    k = r / theta
    K = torch.zeros(r.shape[:-1] + (3, 3), dtype=r.dtype)
    K[..., 0, 1], K[..., 0, 2], K[..., 1, 2] = -k[..., 2], k[..., 1], -k[..., 0]
    K = K - K.transpose(-1, -2)
    s, c = torch.sin(theta)[..., None], torch.cos(theta)[..., None]
    return torch.eye(3, dtype=r.dtype) + s * K + (1 - c) * (K @ K)


R1 = quat_to_mat(torch.randn(5, 4, dtype=torch.float64))
rv = torch.randn(5, 3, dtype=torch.float64, requires_grad=True)
R2 = rodrigues(rv)
R2.sum().backward()
print('rot', torch.det(R1).tolist(), (R1 @ R1.mT - torch.eye(3, dtype=torch.float64)).abs().max().item() < 1e-12,
      (R2 @ R2.mT - torch.eye(3, dtype=torch.float64)).abs().max().item() < 1e-12, rv.grad.sum().item())

# ---- SIREN on a sphere's SDF (float64: Adam steps on sin(30x) layers) ----
torch.set_default_dtype(torch.float64)


class Sine(nn.Module):
    def __init__(self, n_in, n_out, first=False, w0=30.):
        super().__init__()
        self.w0, self.layer = w0, nn.Linear(n_in, n_out)
        with torch.no_grad():
            bound = 1 / n_in if first else math.sqrt(6 / n_in) / w0
            self.layer.weight.uniform_(-bound, bound)

    def forward(self, x):
        return torch.sin(self.w0 * self.layer(x))


siren = nn.Sequential(Sine(3, 32, first=True), Sine(32, 32), nn.Linear(32, 1))
opt = torch.optim.Adam(siren.parameters(), lr=1e-4)
for step in range(3):
    n = F.normalize(torch.randn(32, 3), dim=-1)
    on, off = 0.5 * n, torch.empty(32, 3).uniform_(-1, 1)
    coords = torch.cat([on, off]).requires_grad_(True)
    sdf = siren(coords)
    grad = torch.autograd.grad(sdf, [coords], grad_outputs=torch.ones_like(sdf), create_graph=True)[0]
    lap = 0.
    for i in range(3):
        lap += torch.autograd.grad(grad[..., i], coords, torch.ones_like(grad[..., i]), create_graph=True)[0][..., i:i + 1]
    gt = torch.cat([torch.zeros(32, 1), -torch.ones(32, 1)])
    normals = torch.cat([n, -torch.ones(32, 3)])
    on_mask = gt != -1
    loss = (torch.abs(torch.where(on_mask, sdf, torch.zeros_like(sdf))).mean() * 3e3
            + torch.where(on_mask, torch.zeros_like(sdf), torch.exp(-1e2 * torch.abs(sdf))).mean() * 1e2
            + torch.where(on_mask, 1 - F.cosine_similarity(grad, normals, dim=-1)[..., None],
                          torch.zeros_like(grad[..., :1])).mean() * 1e2
            + torch.abs(grad.norm(dim=-1) - 1).mean() * 5e1)
    opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(siren.parameters(), max_norm=1.)
    opt.step()
    print(f'siren {step} {loss.item():.8f} lap {lap.abs().mean().item():.6f}')

# ---- auto-decoder: weight-normed MLP, latent codes with max_norm, clamped L1, code regularisation ----
codes = nn.Embedding(4, 8, max_norm=1.0)
nn.init.normal_(codes.weight.data, 0.0, 1.0 / math.sqrt(8))
dec = nn.Sequential(nn.utils.weight_norm(nn.Linear(11, 32)), nn.LayerNorm(32), nn.ReLU(), nn.Dropout(0.2),
                    nn.utils.weight_norm(nn.Linear(32, 1)), nn.Tanh())
opt = torch.optim.Adam([{'params': dec.parameters(), 'lr': 5e-4}, {'params': codes.parameters(), 'lr': 1e-3}])
l1 = nn.L1Loss(reduction='sum')
for epoch in range(3):
    idx = torch.randperm(4)[:2]
    pts = torch.rand(2, 16, 3) * 2 - 1
    gt = (pts.norm(dim=-1, keepdim=True) - 0.3 - 0.1 * idx.view(2, 1, 1).double()).reshape(-1, 1)
    ind = idx.unsqueeze(-1).repeat(1, 16).view(-1)
    z = codes(ind)
    pred = dec(torch.cat([z, pts.reshape(-1, 3)], 1))
    loss = l1(torch.clamp(pred, -0.1, 0.1), torch.clamp(gt, -0.1, 0.1)) / 32
    loss = loss + 1e-4 * min(1, epoch / 100) * torch.sum(torch.norm(z, dim=1)) / 32
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f'decoder {epoch} {loss.item():.8f} code norm {torch.mean(torch.norm(codes.weight.data, dim=1)).item():.8f}')
