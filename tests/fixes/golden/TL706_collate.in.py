from torch.utils.data._utils.collate import default_collate as collate_fn


def batches(samples):
    return collate_fn(samples)
