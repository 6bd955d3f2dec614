from torch.utils.data.dataloader import default_collate as collate_fn


def batches(samples):
    return collate_fn(samples)
