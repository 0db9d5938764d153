"""Detection pieces written in plain torch, condensed: a tiny YOLO-style head whose output is viewed to
(batch, anchors, grid, grid, outputs), targets matched to anchors by width/height ratio and clamped to the grid with a
0-d tensor bound (a number and a 0-d tensor: torch's Number overload), a CIoU box loss (with a no_grad trade-off weight), BCE-with-logits objectness and class losses
with pos_weight and a focal wrapper, grid decoding through meshgrid at eval, greedy NMS by hand, a box-IoU matrix, and
VOC-style average precision from cumsum and trapz."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(7)
NA, NC, IMG = 3, 4, 32


def xywh2xyxy(x):
    y = x.new(x.shape)
    y[..., 0] = x[..., 0] - x[..., 2] / 2
    y[..., 1] = x[..., 1] - x[..., 3] / 2
    y[..., 2] = x[..., 0] + x[..., 2] / 2
    y[..., 3] = x[..., 1] + x[..., 3] / 2
    return y


def ciou(b1, b2, eps=1e-9):
    """b1: 4 x n (centre, size), b2: n x 4."""
    b2 = b2.T
    (b1x1, b1x2), (b1y1, b1y2) = (b1[0] - b1[2] / 2, b1[0] + b1[2] / 2), (b1[1] - b1[3] / 2, b1[1] + b1[3] / 2)
    (b2x1, b2x2), (b2y1, b2y2) = (b2[0] - b2[2] / 2, b2[0] + b2[2] / 2), (b2[1] - b2[3] / 2, b2[1] + b2[3] / 2)
    inter = (torch.min(b1x2, b2x2) - torch.max(b1x1, b2x1)).clamp(0) * \
        (torch.min(b1y2, b2y2) - torch.max(b1y1, b2y1)).clamp(0)
    w1, h1, w2, h2 = b1x2 - b1x1, b1y2 - b1y1 + eps, b2x2 - b2x1, b2y2 - b2y1 + eps
    union = w1 * h1 + w2 * h2 - inter + eps
    iou = inter / union
    cw, ch = torch.max(b1x2, b2x2) - torch.min(b1x1, b2x1), torch.max(b1y2, b2y2) - torch.min(b1y1, b2y1)
    c2 = cw ** 2 + ch ** 2 + eps
    rho2 = ((b2x1 + b2x2 - b1x1 - b1x2) ** 2 + (b2y1 + b2y2 - b1y1 - b1y2) ** 2) / 4
    v = (4 / math.pi ** 2) * torch.pow(torch.atan(w2 / h2) - torch.atan(w1 / h1), 2)
    with torch.no_grad():
        alpha = v / ((1 + eps) - iou + v)
    return iou - (rho2 / c2 + v * alpha)


class Focal(nn.Module):
    def __init__(self, base, gamma=1.5, alpha=0.25):
        super().__init__()
        self.base, self.gamma, self.alpha = base, gamma, alpha
        self.base.reduction = "none"

    def forward(self, pred, true):
        loss = self.base(pred, true)
        p = torch.sigmoid(pred)
        p_t = true * p + (1 - true) * (1 - p)
        loss *= (true * self.alpha + (1 - true) * (1 - self.alpha)) * (1.0 - p_t) ** self.gamma
        return loss.mean()


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1, bias=False), nn.BatchNorm2d(8, momentum=0.03),
                                  nn.LeakyReLU(0.1), nn.MaxPool2d(2, 2), nn.Conv2d(8, NA * (NC + 5), 1))
        self.register_buffer("anchors", torch.tensor([[4., 5.], [8., 7.], [12., 14.]]))
        self.stride = 4

    def forward(self, x):
        p = self.body(x)
        bs, _, ny, nx = p.shape
        p = p.view(bs, NA, NC + 5, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
        if self.training:
            return p
        yv, xv = torch.meshgrid([torch.arange(ny), torch.arange(nx)], indexing="ij")
        grid = torch.stack((xv, yv), 2).view(1, 1, ny, nx, 2).float()
        y = p.sigmoid()
        y[..., :2] = (y[..., :2] * 2. - 0.5 + grid) * self.stride
        y[..., 2:4] = (y[..., 2:4] * 2) ** 2 * self.anchors.view(1, NA, 1, 1, 2)
        return y.view(bs, -1, NC + 5)


def build_targets(p, targets, model):
    nt = targets.shape[0]
    gain = torch.ones(7)
    ai = torch.arange(NA).float().view(NA, 1).repeat(1, nt)
    t = torch.cat((targets.repeat(NA, 1, 1), ai[:, :, None]), 2)
    anchors = model.anchors / model.stride
    gain[2:6] = torch.tensor(p.shape)[[3, 2, 3, 2]]
    t = t * gain
    r = t[:, :, 4:6] / anchors[:, None]
    t = t[torch.max(r, 1. / r).max(2)[0] < 4]
    b, c = t[:, :2].long().T
    gxy, gwh = t[:, 2:4], t[:, 4:6]
    gij = gxy.long()
    gi, gj = gij.T
    a = t[:, 6].long()
    return c, torch.cat((gxy - gij, gwh), 1), (b, a, gj.clamp_(0, gain[3].long() - 1), gi.clamp(0, gain[2] - 1).long()), \
        anchors[a]


def compute_loss(p, targets, model, bce_cls, bce_obj):
    tcls, tbox, (b, a, gj, gi), anch = build_targets(p, targets, model)
    tobj = torch.zeros_like(p[..., 0])
    ps = p[b, a, gj, gi]
    pbox = torch.cat((ps[:, :2].sigmoid() * 2. - 0.5, (ps[:, 2:4].sigmoid() * 2) ** 2 * anch), 1)
    iou = ciou(pbox.T, tbox)
    lbox = (1.0 - iou).mean()
    tobj[b, a, gj, gi] = iou.detach().clamp(0).type(tobj.dtype)
    t = torch.full_like(ps[:, 5:], 0.0)
    t[range(len(b)), tcls] = 1.0
    lcls, lobj = bce_cls(ps[:, 5:], t), bce_obj(p[..., 4], tobj)
    loss = 0.05 * lbox + lobj + 0.5 * lcls
    return loss * p.shape[0], torch.cat((lbox.view(1), lobj.view(1), lcls.view(1))).detach()


def box_iou(box1, box2):
    area = lambda b: (b[2] - b[0]) * (b[3] - b[1])  # noqa: E731
    inter = (torch.min(box1[:, None, 2:], box2[:, 2:]) - torch.max(box1[:, None, :2], box2[:, :2])).clamp(0).prod(2)
    return inter / (area(box1.T)[:, None] + area(box2.T) - inter)


def nms(boxes, scores, thr):
    order, keep = scores.argsort(descending=True), []
    while order.numel():
        i = order[0]
        keep.append(i.item())
        if order.numel() == 1:
            break
        order = order[1:][box_iou(boxes[i].unsqueeze(0), boxes[order[1:]])[0] <= thr]
    return torch.tensor(keep, dtype=torch.long)


def detect(pred, conf_thres=0.3, iou_thres=0.45):
    out = []
    for x in pred:
        x = x[x[:, 4] > conf_thres]
        x[:, 5:] *= x[:, 4:5]
        i, j = (x[:, 5:] > conf_thres).nonzero(as_tuple=False).T
        x = torch.cat((xywh2xyxy(x[:, :4])[i], x[i, j + 5, None], j[:, None].float()), 1)
        keep = nms(x[:, :4] + x[:, 5:6] * 4096, x[:, 4], iou_thres)
        out.append(x[keep])
    return out


def average_precision(tp, conf):
    order = torch.argsort(conf, descending=True)
    tpc = torch.cumsum(tp[order], dim=0)
    fpc = torch.cumsum(1 - tp[order], dim=0)
    recall = tpc / (tp.sum() + 1e-16)
    precision = torch.divide(tpc, tpc + fpc + 1e-6)
    return torch.trapz(torch.cat((torch.tensor([1]), precision)), torch.cat((torch.tensor([0]), recall)))


model = Head()
for m in model.modules():
    if isinstance(m, nn.Conv2d):
        nn.init.normal_(m.weight.data, 0.0, 0.1)
imgs = torch.rand(4, 3, IMG, IMG)
targets = torch.cat((torch.arange(4).repeat_interleave(2)[:, None].float(), torch.randint(0, NC, (8, 1)).float(),
                     torch.rand(8, 2) * 0.6 + 0.2, torch.rand(8, 2) * 0.3 + 0.1), 1)
bce_cls = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([1.0]))
bce_obj = Focal(nn.BCEWithLogitsLoss(pos_weight=torch.tensor([1.0])))
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, nesterov=True, weight_decay=5e-4)
sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda e: (1 - e / 6) * 0.9 + 0.1)
for step in range(6):
    model.train()
    loss, parts = compute_loss(model(imgs), targets, model, bce_cls, bce_obj)
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
    print(step, "loss %.5f" % loss.item(), [round(v, 5) for v in parts.tolist()], "lr %.6f" % sched.get_last_lr()[0])

model.eval()
with torch.no_grad():
    pred = model(imgs)
print("pred", tuple(pred.shape), "%.4f" % pred[..., 4].mean().item(), [round(v, 4) for v in pred[0, 0, :5].tolist()])
dets = detect(pred, conf_thres=0.12)
for k, d in enumerate(dets):
    print("image", k, "kept", d.shape[0], [round(v, 3) for v in d[:2].flatten().tolist()])
gt = xywh2xyxy(targets[:, 2:]) * IMG
allp = torch.cat([torch.cat((d, torch.full((d.shape[0], 1), float(k))), 1) for k, d in enumerate(dets)])
ious = box_iou(allp[:, :4], gt)
same = allp[:, 6:7] == targets[:, 0][None]
tp = ((ious * same) > 0.1).any(1).float()
print("tp", int(tp.sum()), "of", tp.numel(), "AP %.4f" % average_precision(tp, allp[:, 4]).item())
