"""TL102 probe: full-batch GNN training that evaluates on the validation mask every ten epochs
(`evaluate` switches the model to eval) and never switches back, a seq2seq trainer whose epoch
function relies on the mode the beam-search decoding left, and a VAE loop whose per-epoch sampling
helper calls `.eval()`; near misses put the GNN back with `model.train()` at the top of the epoch,
a seq2seq epoch function that calls `model.train()` itself, and an image captioner whose frozen CNN
encoder stays in eval mode on purpose (it runs under `no_grad` in the loop, only the decoder trains)."""
import torch
import torch.nn.functional as F


@torch.no_grad()
def evaluate(model, data, mask):
    model.eval()
    pred = model(data.x, data.edge_index).argmax(-1)
    return (pred[mask] == data.y[mask]).float().mean()


def train_gnn(model, data, optimizer, epochs=200):
    for epoch in range(epochs):  # expect: TL102
        optimizer.zero_grad()
        out = model(data.x, data.edge_index)
        loss = F.cross_entropy(out[data.train_mask], data.y[data.train_mask])
        loss.backward()
        optimizer.step()
        if epoch % 10 == 0:
            print(epoch, float(evaluate(model, data, data.val_mask)))


def train_gnn_switching_back(model, data, optimizer, epochs=200):
    for epoch in range(epochs):  # clean
        model.train()
        optimizer.zero_grad()
        out = model(data.x, data.edge_index)
        loss = F.cross_entropy(out[data.train_mask], data.y[data.train_mask])
        loss.backward()
        optimizer.step()
        if epoch % 10 == 0:
            print(epoch, float(evaluate(model, data, data.val_mask)))


@torch.no_grad()
def beam_search(seq2seq, src, bos, eos, beam=4, max_len=50):
    seq2seq.eval()
    memory = seq2seq.encode(src)
    beams = [(torch.full((1, 1), bos, dtype=torch.long, device=src.device), 0.0)]
    for _ in range(max_len):
        candidates = []
        for tokens, score in beams:
            if tokens[0, -1].item() == eos:
                candidates.append((tokens, score))
                continue
            logp = seq2seq.decode(memory, tokens)[:, -1].log_softmax(-1)
            top = logp.topk(beam, dim=-1)
            for lp, idx in zip(top.values[0], top.indices[0]):
                candidates.append((torch.cat([tokens, idx.view(1, 1)], dim=1), score + lp.item()))
        beams = sorted(candidates, key=lambda c: c[1], reverse=True)[:beam]
    return beams[0][0]


def teacher_forcing_epoch(seq2seq, loader, optimizer, pad_id):
    for src, tgt in loader:  # expect: TL102
        optimizer.zero_grad(set_to_none=True)
        logits = seq2seq(src, tgt[:, :-1])
        loss = F.cross_entropy(logits.transpose(1, 2), tgt[:, 1:], ignore_index=pad_id)
        loss.backward()
        optimizer.step()


def teacher_forcing_epoch_train_mode(seq2seq, loader, optimizer, pad_id):
    seq2seq.train()
    for src, tgt in loader:  # clean
        optimizer.zero_grad(set_to_none=True)
        logits = seq2seq(src, tgt[:, :-1])
        loss = F.cross_entropy(logits.transpose(1, 2), tgt[:, 1:], ignore_index=pad_id)
        loss.backward()
        optimizer.step()


def fit_seq2seq(seq2seq, train_loader, sample_src, optimizer, bos, eos, pad_id, epochs=10):
    for epoch in range(epochs):
        teacher_forcing_epoch(seq2seq, train_loader, optimizer, pad_id)
        print(beam_search(seq2seq, sample_src, bos, eos))


def fit_seq2seq_train_mode(seq2seq, train_loader, sample_src, optimizer, bos, eos, pad_id, epochs=10):
    for epoch in range(epochs):
        teacher_forcing_epoch_train_mode(seq2seq, train_loader, optimizer, pad_id)
        print(beam_search(seq2seq, sample_src, bos, eos))


@torch.no_grad()
def sample_images(vae, n, latent_dim, device):
    vae.eval()
    return vae.decode(torch.randn(n, latent_dim, device=device))


def train_vae(vae, loader, optimizer, latent_dim, device, epochs=30):
    for epoch in range(epochs):
        for x in loader:  # expect: TL102
            x = x.to(device)
            optimizer.zero_grad()
            recon, mu, logvar = vae(x)
            kl = -0.5 * torch.mean(1 + logvar - mu.pow(2) - logvar.exp())
            loss = F.binary_cross_entropy(recon, x) + kl
            loss.backward()
            optimizer.step()
        samples = sample_images(vae, 16, latent_dim, device)
        print(epoch, samples.shape)


def train_captioner(cnn, decoder, loader, optimizer, pad_id, epochs=5):
    cnn.eval()
    decoder.train()
    for epoch in range(epochs):
        for images, captions in loader:  # clean
            with torch.no_grad():
                feats = cnn(images)
            optimizer.zero_grad()
            logits = decoder(feats, captions[:, :-1])
            loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), captions[:, 1:].reshape(-1),
                                   ignore_index=pad_id)
            loss.backward()
            optimizer.step()
