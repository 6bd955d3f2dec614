"""TL404 probe: a retrieval evaluator that encodes each query of a batch separately (an index
loop over `query.size(0)` with a trailing-None sample, and an HF-style call with keyword
tensors), against chunked encoding over a stepped range and a loop over a module list."""
import torch
import torch.nn.functional as F


@torch.no_grad()
def score_queries(encoder, query, gallery_emb):
    encoder.eval()
    scores = []
    for idx in range(query.size(0)):
        q = F.normalize(encoder(query[idx][None]), dim=-1)  # expect: TL404
        scores.append(q @ gallery_emb.T)
    return torch.cat(scores)


@torch.no_grad()
def embed_texts(text_model, input_ids, attention_mask):
    text_model.eval()
    rows = []
    for i in range(len(input_ids)):
        out = text_model(input_ids=input_ids[i].unsqueeze(0), attention_mask=attention_mask[i].unsqueeze(0))  # expect: TL404
        rows.append(out.last_hidden_state[:, 0])
    return torch.cat(rows)


@torch.no_grad()
def embed_in_chunks(encoder, images, chunk=256):
    encoder.eval()
    out = []
    for start in range(0, images.size(0), chunk):
        out.append(encoder(images[start:start + chunk]))  # clean
    return torch.cat(out)


def apply_heads(heads, features):
    return [heads[i](features) for i in range(len(heads))]  # clean
