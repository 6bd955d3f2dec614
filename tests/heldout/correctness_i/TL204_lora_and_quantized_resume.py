"""TL204 probe: a hand-written LoRA fine-tuning script loading its adapter weights into the full
model with `strict=False` and dropping the result (a typo in an adapter key leaves the adapter at
its zero init, silently), a quantization-aware resume loading an fp32 checkpoint into the
fake-quantized model the same way, and a detector's `init_weights` loading ImageNet weights into
its backbone; near misses are the result unpacked and asserted on, the result logged, a checkpoint
filtered against the model's own keys first, and optimizer / GradScaler `load_state_dict` calls
(which return None)."""
import logging

import torch
import torch.nn as nn

logger = logging.getLogger(__name__)


class LoRALinear(nn.Module):
    def __init__(self, base: nn.Linear, r=8, alpha=16):
        super().__init__()
        self.base = base
        self.lora_a = nn.Parameter(torch.randn(r, base.in_features) * 0.01)
        self.lora_b = nn.Parameter(torch.zeros(base.out_features, r))
        self.scaling = alpha / r

    def forward(self, x):
        return self.base(x) + (x @ self.lora_a.t() @ self.lora_b.t()) * self.scaling


def load_adapter(model, adapter_path):
    adapter = torch.load(adapter_path, map_location="cpu", weights_only=True)
    model.load_state_dict(adapter, strict=False)  # expect: TL204
    return model


def load_adapter_checked(model, adapter_path):
    adapter = torch.load(adapter_path, map_location="cpu", weights_only=True)
    missing, unexpected = model.load_state_dict(adapter, strict=False)  # clean
    assert not unexpected, f"adapter keys not in model: {unexpected[:5]}"
    assert all("lora_" not in k for k in missing), "adapter weights missing"
    return model


def resume_qat(qat_model, optimizer, scaler, ckpt_path):
    ckpt = torch.load(ckpt_path, map_location="cpu", weights_only=True)
    qat_model.load_state_dict(ckpt["model"], strict=False)  # expect: TL204
    optimizer.load_state_dict(ckpt["optimizer"])  # clean
    scaler.load_state_dict(ckpt["scaler"])  # clean
    return ckpt["step"]


def warm_start(model, ckpt_path):
    state = torch.load(ckpt_path, map_location="cpu", weights_only=True)
    result = model.load_state_dict(state, strict=False)  # clean
    logger.info("missing %s, unexpected %s", result.missing_keys, result.unexpected_keys)
    return model


def load_matching(model, ckpt_path):
    state = torch.load(ckpt_path, map_location="cpu", weights_only=True)
    own = model.state_dict()
    state = {k: v for k, v in state.items() if k in own and v.shape == own[k].shape}
    model.load_state_dict(state, strict=False)  # clean
    return model


class Detector(nn.Module):
    def __init__(self, backbone, head):
        super().__init__()
        self.backbone = backbone
        self.head = head

    def init_weights(self, pretrained):
        state = torch.load(pretrained, map_location="cpu", weights_only=True)
        self.backbone.load_state_dict(state, strict=False)  # expect: TL204

    def forward(self, images):
        return self.head(self.backbone(images))
