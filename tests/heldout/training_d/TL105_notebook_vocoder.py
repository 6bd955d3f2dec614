"""TL105 probe: notebook-style top-level code that picks a device variable and then still moves a
vocoder and its mel batches with `.cuda()` / `.to("cuda:0")`, and an inference helper taking `device`
as a parameter that builds its noise with `device="cuda"`; near misses are the `torch.device(...)`
expression itself, moves guarded by `torch.cuda.is_available()`, `torch.autocast("cuda")` and a
`GradScaler("cuda")` device type, and the device variable used as intended."""
import torch
from torch import nn
import torch.nn.functional as F
from torch.utils.data import DataLoader

device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")  # clean


class TinyVocoder(nn.Module):
    def __init__(self, n_mels=80, channels=256, hop=256):
        super().__init__()
        self.pre = nn.Conv1d(n_mels, channels, 7, padding=3)
        self.up = nn.ConvTranspose1d(channels, 1, hop * 2, stride=hop, padding=hop // 2)

    def forward(self, mel):
        return torch.tanh(self.up(F.leaky_relu(self.pre(mel), 0.1)))


vocoder = TinyVocoder().cuda()  # expect: TL105
optimizer = torch.optim.AdamW(vocoder.parameters(), lr=2e-4, betas=(0.8, 0.99))
scaler = torch.amp.GradScaler("cuda")  # clean
loader = DataLoader(torch.load("mels.pt", weights_only=True), batch_size=16, shuffle=True, num_workers=4,
                    pin_memory=True)

# %% train
vocoder.train()
for mel, wav in loader:
    mel = mel.to("cuda:0", non_blocking=True)  # expect: TL105
    wav = wav.to(device, non_blocking=True)  # clean
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast("cuda", dtype=torch.float16):  # clean
        loss = F.l1_loss(vocoder(mel)[..., : wav.size(-1)], wav)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()

# %% move the EMA copy only when a GPU is there
if torch.cuda.is_available():
    vocoder_ema = TinyVocoder().cuda()  # clean
else:
    vocoder_ema = TinyVocoder()


@torch.inference_mode()
def synthesize(model: nn.Module, mel: torch.Tensor, device: torch.device, sigma=0.0):
    model.eval()
    noise = torch.randn(mel.size(0), 1, mel.size(-1) * 256, device="cuda")  # expect: TL105
    return model(mel.to(device)) + sigma * noise  # clean
