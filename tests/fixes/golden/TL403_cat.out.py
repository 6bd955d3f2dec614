import torch
import torch.nn.functional as F


@torch.no_grad()
def embed_images(image_encoder, loader, device):
    image_encoder.eval()
    all_emb = torch.empty(0, image_encoder.embed_dim, device=device)
    all_labels = torch.empty(0, dtype=torch.long)
    all_emb_parts = [all_emb]
    all_labels_parts = [all_labels]
    for images, labels in loader:
        emb = F.normalize(image_encoder(images.to(device)), dim=-1)
        all_emb_parts.append(emb)
        all_labels_parts.extend([labels, labels])
    all_labels = torch.cat(all_labels_parts, dim=0)
    all_emb = torch.cat(all_emb_parts)
    return all_emb, all_labels
