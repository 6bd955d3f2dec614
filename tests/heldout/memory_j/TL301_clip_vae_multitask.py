"""TL301 probe: graphs kept alive across iterations in contrastive, VAE, multi-task and flow
training: CLIP losses appended for an epoch average, a VAE's KL term summed into an epoch total,
per-task losses kept in a dict of lists by a multi-task loop over several loaders, an exponential
moving average of a flow's negative log-likelihood, and image embeddings kept for a queue of
negatives; near misses detach before appending, sum one step's loss terms into a total bound afresh
each step, keep `argmax` predictions (no graph), and keep the queue of detached embeddings."""
import torch
import torch.nn.functional as F


def clip_epoch(image_encoder, text_encoder, optimizer, loader, temperature=0.07):
    losses, detached = [], []
    for images, tokens in loader:
        optimizer.zero_grad(set_to_none=True)
        img = F.normalize(image_encoder(images), dim=-1)
        txt = F.normalize(text_encoder(tokens), dim=-1)
        logits = img @ txt.t() / temperature
        labels = torch.arange(images.size(0), device=images.device)
        loss = (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels)) / 2
        loss.backward()
        optimizer.step()
        losses.append(loss)  # expect: TL301
        detached.append(loss.detach())  # clean
    return torch.stack(detached).mean()


def vae_epoch(vae, optimizer, loader, beta=1.0):
    total_kl = 0.0
    total_recon = 0.0
    for x in loader:
        optimizer.zero_grad()
        recon, mu, logvar = vae(x)
        rec = F.binary_cross_entropy(recon, x, reduction="sum")
        kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
        loss = rec + beta * kl
        loss.backward()
        optimizer.step()
        total_kl += kl  # expect: TL301
        total_recon += rec.detach()  # clean
    return total_kl, total_recon


def multitask(model, optimizer, loaders, weights):
    history = {name: [] for name in loaders}
    for batches in zip(*loaders.values()):
        optimizer.zero_grad()
        step_loss = 0.0
        for name, (x, y) in zip(loaders, batches):
            task_loss = F.cross_entropy(model(x, task=name), y)
            step_loss = step_loss + weights[name] * task_loss  # clean
            history[name].append(task_loss)  # expect: TL301
        step_loss.backward()
        optimizer.step()
    return history


def flow_fit(flow, optimizer, loader):
    ema_nll = None
    for x in loader:
        optimizer.zero_grad()
        nll = -flow.log_prob(x).mean()
        nll.backward()
        optimizer.step()
        ema_nll = nll if ema_nll is None else 0.99 * ema_nll + 0.01 * nll  # expect: TL301
    return ema_nll


def classifier_epoch(model, optimizer, loader):
    predictions = []
    for x, y in loader:
        optimizer.zero_grad()
        logits = model(x)
        F.cross_entropy(logits, y).backward()
        optimizer.step()
        predictions.append(logits.argmax(-1))  # clean
    return torch.cat(predictions)


def moco_like(encoder, optimizer, loader, queue_size=4096):
    queue = []
    for view_a, view_b in loader:
        optimizer.zero_grad()
        q = F.normalize(encoder(view_a), dim=-1)
        k = F.normalize(encoder(view_b), dim=-1)
        negatives = torch.cat(queue[-queue_size:]) if queue else k.new_zeros(0, k.size(1))
        logits = torch.cat([(q * k).sum(-1, keepdim=True), q @ negatives.t()], dim=1) / 0.2
        F.cross_entropy(logits, logits.new_zeros(q.size(0), dtype=torch.long)).backward()
        optimizer.step()
        queue.append(k)  # expect: TL301


def moco_like_detached(encoder, optimizer, loader, queue_size=4096):
    queue = []
    for view_a, view_b in loader:
        optimizer.zero_grad()
        q = F.normalize(encoder(view_a), dim=-1)
        k = F.normalize(encoder(view_b), dim=-1)
        negatives = torch.cat(queue[-queue_size:]) if queue else k.new_zeros(0, k.size(1))
        logits = torch.cat([(q * k).sum(-1, keepdim=True), q @ negatives.t()], dim=1) / 0.2
        F.cross_entropy(logits, logits.new_zeros(q.size(0), dtype=torch.long)).backward()
        optimizer.step()
        queue.append(k.detach())  # clean
