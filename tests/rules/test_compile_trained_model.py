"""TL409 (missing-compile) names the model the loop trains: a network the loop only runs
under `torch.no_grad()` (a DQN/SAC target network soft-updated from the trained one, a
frozen teacher) is not trained there, so the hint names the first model run with autograd
on; a loop that trains no model it calls directly stays silent. Checked with the real CLI."""
from __future__ import annotations

import json

from tests.test_cli import write

DQN = """\
import copy
import torch
import torch.nn.functional as F

device = torch.device("cuda")
q_network = torch.nn.Sequential(torch.nn.Linear(64, 512), torch.nn.ReLU(), torch.nn.Linear(512, 18)).to(device)
target_network = copy.deepcopy(q_network)
optimizer = torch.optim.Adam(q_network.parameters(), lr=1e-4)
for step in range(1_000_000):
    obs, actions, rewards, next_obs = replay.sample(256)
    with torch.no_grad():
        target_max, _ = target_network(next_obs).max(dim=1)
        td_target = rewards + 0.99 * target_max
    old_val = q_network(obs).gather(1, actions).squeeze()
    loss = F.mse_loss(td_target, old_val)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    for target_param, param in zip(target_network.parameters(), q_network.parameters()):
        target_param.data.copy_(0.005 * param.data + 0.995 * target_param.data)
"""


def _tl409(tmp_path, cli) -> list[tuple[int, str]]:
    completed = cli("check", "--format", "json", "--select", "TL409", "train.py", cwd=tmp_path)
    assert completed.returncode in (0, 1), completed.stderr
    return [(item["line"], item["message"]) for item in json.loads(completed.stdout) if item["code"] == "TL409"]


def test_the_hint_names_the_trained_network_not_the_target_network(tmp_path, cli):
    write(tmp_path, {"train.py": DQN})
    assert _tl409(tmp_path, cli) == [
        (14, "`q_network` is trained without `torch.compile`. Try `q_network = torch.compile(q_network)` "
             "for faster steps.")]


def test_a_loop_that_runs_its_only_model_without_grad_is_silent(tmp_path, cli):
    """The update runs in a helper the file cannot see into; the loop itself only acts."""
    write(tmp_path, {"train.py": DQN.replace("    old_val = q_network(obs).gather(1, actions).squeeze()\n", "")
                     .replace("F.mse_loss(td_target, old_val)", "update(td_target)")})
    assert _tl409(tmp_path, cli) == []


MODEL = """\
from torch import nn


class Encoder(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.convs = nn.Sequential(nn.Conv1d(dim, dim, 5, padding=2), nn.ReLU())
        self.{layer}


class Seq2Mel(nn.Module):
    def __init__(self, dim=512):
        super().__init__()
        self.embedding = nn.Embedding(148, dim)
        self.encoder = Encoder(dim)
        self.project = nn.Linear(dim, 80)
"""

TRAIN = """\
import torch
import torch.nn.functional as F
from model import Seq2Mel


def load_model():
    model = Seq2Mel().cuda()
    return model


def load_checkpoint(path, model, optimizer):
    state = torch.load(path, weights_only=True)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    return model, optimizer, state["iteration"]


def train(loader, checkpoint):
    model = load_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    if checkpoint is not None:
        model, optimizer, iteration = load_checkpoint(checkpoint, model, optimizer)
    for epoch in range(500):
        for text, mel in loader:
            loss = F.mse_loss(model(text.cuda()), mel.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
"""


def test_a_model_a_project_file_builds_from_an_lstm_is_not_flagged(tmp_path, cli):
    """Tacotron 2's train.py: `load_model()` builds `Tacotron2` of model.py, whose encoder
    holds an `nn.LSTM`; Dynamo graph-breaks there, so compiling would capture little."""
    write(tmp_path, {"model.py": MODEL.format(layer="lstm = nn.LSTM(dim, dim // 2, batch_first=True, bidirectional=True)"),
                     "train.py": TRAIN})
    assert _tl409(tmp_path, cli) == []


def test_a_model_a_project_file_builds_from_convolutions_is_flagged(tmp_path, cli):
    write(tmp_path, {"model.py": MODEL.format(layer="out = nn.Conv1d(dim, dim, 1)"), "train.py": TRAIN})
    assert [line for line, _ in _tl409(tmp_path, cli)] == [25]


GAN = """\
import torch
from torch import autograd
import torch.nn.functional as F


def r1_penalty(real_pred, real_img):
    grad_real, = autograd.grad(outputs=real_pred.sum(), inputs=real_img, create_graph={create_graph})
    return grad_real.pow(2).flatten(1).sum(1).mean()


def train(loader, generator, discriminator, d_optim, device):
    for real_img in loader:
        real_img = real_img.to(device).requires_grad_()
        real_pred = discriminator(real_img)
        fake_pred = discriminator(generator(torch.randn(64, 512, device=device)).detach())
        d_loss = F.softplus(-real_pred).mean() + F.softplus(fake_pred).mean() + 10 * r1_penalty(real_pred, real_img)
        d_optim.zero_grad()
        d_loss.backward()
        d_optim.step()
"""


def test_a_model_under_a_gradient_penalty_is_not_the_one_named(tmp_path, cli):
    """StyleGAN2's R1 penalty backpropagates through `autograd.grad(..., create_graph=True)`
    of the discriminator's output: a compiled graph refuses that double backward, so the hint
    names the generator, whose output is detached before the critic sees it."""
    write(tmp_path, {"train.py": GAN.format(create_graph="True")})
    assert [(line, message.split("`")[1]) for line, message in _tl409(tmp_path, cli)] == [(15, "generator")]


def test_a_loop_whose_only_model_is_under_a_gradient_penalty_is_silent(tmp_path, cli):
    only_critic = GAN.format(create_graph="True").replace(
        "        fake_pred = discriminator(generator(torch.randn(64, 512, device=device)).detach())\n", "").replace(
        " + F.softplus(fake_pred).mean()", "")
    write(tmp_path, {"train.py": only_critic})
    assert _tl409(tmp_path, cli) == []


def test_a_gradient_taken_without_a_graph_leaves_the_hint(tmp_path, cli):
    write(tmp_path, {"train.py": GAN.format(create_graph="False")})
    assert [(line, message.split("`")[1]) for line, message in _tl409(tmp_path, cli)] == [(14, "discriminator")]


PROJECTOR = """\
import torch
from torch import optim
import torch.nn.functional as F
from model import Generator

device = "cuda"
g_ema = Generator(256, 512, 8).to(device)
g_ema.eval()
target = torch.randn(1, 3, 256, 256, device=device)
latent_in = g_ema.mean_latent(4096).detach().clone()
latent_in.requires_grad = True
noises = []
for noise in g_ema.make_noise():
    noises.append(noise.normal_().requires_grad_())
optimizer = optim.Adam({params}, lr=0.1)
for i in range(1000):
    img_gen = g_ema(latent_in, noise=noises)
    loss = F.mse_loss(img_gen, target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""


def test_a_loop_that_optimises_only_its_input_trains_no_model(tmp_path, cli):
    """StyleGAN2's projector optimises a latent and noise maps through a frozen generator."""
    write(tmp_path, {"train.py": PROJECTOR.format(params="[latent_in] + noises")})
    assert _tl409(tmp_path, cli) == []


def test_a_loop_whose_optimizer_also_holds_the_model_trains_it(tmp_path, cli):
    write(tmp_path, {"train.py": PROJECTOR.format(params="[latent_in] + list(g_ema.parameters())")})
    assert [line for line, _ in _tl409(tmp_path, cli)] == [17]
    tensors = PROJECTOR.format(params="[latent_in] + noises").replace(
        "    noises.append(noise.normal_().requires_grad_())\n",
        "    noises.append(noise.normal_().requires_grad_())\nfor p in g_ema.parameters():\n    noises.append(p)\n")
    write(tmp_path, {"train.py": tensors})
    assert [line for line, _ in _tl409(tmp_path, cli)] == [19]


FEATURES = """\
import torch
from torch import nn


class ModelWithIntermediateLayers(nn.Module):
    def __init__(self, feature_model, n_last_blocks):
        super().__init__()
        self.feature_model = feature_model.eval()
        self.n_last_blocks = n_last_blocks

    def forward(self, images):
        with torch.inference_mode():
            features = self.feature_model.get_intermediate_layers(images, self.n_last_blocks)
        return features
"""

LINEAR = """\
import torch
from torch import nn
from features import ModelWithIntermediateLayers


def eval_linear(feature_model, linear_classifier, loader, optimizer):
    for data, labels in loader:
        features = feature_model(data.cuda())
        loss = nn.functional.cross_entropy(linear_classifier(features), labels.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def run_eval_linear(backbone, loader):
    feature_model = ModelWithIntermediateLayers(backbone, 4)
    linear_classifier = nn.Linear(1536, 1000).cuda()
    optimizer = torch.optim.SGD(linear_classifier.parameters(), lr=0.01)
    eval_linear(feature_model=feature_model, linear_classifier=linear_classifier, loader=loader,
                optimizer=optimizer)
"""


def test_a_feature_extractor_whose_class_runs_under_inference_mode_is_not_the_trained_model(tmp_path, cli):
    """DINOv2's linear evaluation: the wrapper's `forward` runs the backbone under
    `torch.inference_mode()` (in another file), so the loop trains only the linear head."""
    write(tmp_path, {"features.py": FEATURES, "train.py": LINEAR})
    assert _tl409(tmp_path, cli) == [
        (9, "`linear_classifier` is trained without `torch.compile`. Try "
            "`linear_classifier = torch.compile(linear_classifier)` for faster steps.")]


MLDG = """\
import copy
import torch
import torch.nn.functional as F


class MLDG:
    def update(self, minibatches):
        self.optimizer.zero_grad()
        for (xi, yi), (xj, yj) in minibatches:
            inner_net = copy.deepcopy(self.network)
            inner_opt = torch.optim.Adam(inner_net.parameters(), lr=1e-3)
            inner_obj = F.cross_entropy(inner_net(xi), yi)
            inner_opt.zero_grad()
            inner_obj.backward()
            inner_opt.step()
"""


def test_a_model_copied_anew_in_each_iteration_is_not_asked_to_compile(tmp_path, cli):
    """Compiling a module made fresh every iteration recompiles every iteration."""
    write(tmp_path, {"train.py": MLDG})
    assert _tl409(tmp_path, cli) == []
    hoisted = MLDG.replace("            inner_net = copy.deepcopy(self.network)\n", "").replace(
        "        self.optimizer.zero_grad()\n", "        self.optimizer.zero_grad()\n"
        "        inner_net = copy.deepcopy(self.network)\n")
    write(tmp_path, {"train.py": hoisted})
    assert [line for line, _ in _tl409(tmp_path, cli)] == [12]


OPACUS = """\
import torch
from opacus import PrivacyEngine

model = torch.nn.Sequential(torch.nn.Conv2d(1, 16, 8, 2), torch.nn.ReLU(), torch.nn.Flatten(),
                            torch.nn.LazyLinear(10))
optimizer = torch.optim.SGD(model.parameters(), lr=0.25)
privacy_engine = PrivacyEngine()
model, optimizer, train_loader = privacy_engine.make_private(
    module=model, optimizer=optimizer, data_loader=train_loader, noise_multiplier=1.1, max_grad_norm=1.0)
for epoch in range(10):
    for data, target in train_loader:
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(data), target)
        loss.backward()
        optimizer.step()
"""


def test_a_model_trained_with_opacus_is_not_asked_to_compile(tmp_path, cli):
    """Opacus' GradSampleModule hooks do not support compiled models."""
    write(tmp_path, {"train.py": OPACUS})
    assert _tl409(tmp_path, cli) == []
    plain = "\n".join(line for line in OPACUS.splitlines() if "rivacy" not in line and "module=model" not in line)
    write(tmp_path, {"train.py": plain + "\n"})
    assert [line for line, _ in _tl409(tmp_path, cli)] == [9]


FROZEN_ENCODER = """\
import torch
import torch.nn.functional as F

device = torch.device("cuda")
text_encoder = load_text_encoder().to(device)
denoiser = build_denoiser().to(device)
text_encoder.requires_grad_(False)
denoiser.train()
optimizer = torch.optim.AdamW(denoiser.parameters(), lr=1e-4)
for tokens, images, noise in loader:
    context = text_encoder(tokens.to(device))
    pred = denoiser(images.to(device) + noise.to(device), context)
    loss = F.mse_loss(pred, noise.to(device))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""


def test_a_frozen_encoder_is_not_the_model_named(tmp_path, cli):
    """`text_encoder.requires_grad_(False)` and nothing trains it again: the hint names the
    denoiser the optimizer holds (diffusers' ControlNet/text-to-image scripts)."""
    write(tmp_path, {"train.py": FROZEN_ENCODER})
    assert _tl409(tmp_path, cli) == [
        (12, "`denoiser` is trained without `torch.compile`. Try `denoiser = torch.compile(denoiser)` "
             "for faster steps.")]


def test_an_encoder_frozen_then_trained_through_its_parameters_stays_named(tmp_path, cli):
    """A conditional freeze whose parameters join the optimizer (`--train_text_encoder`), or a
    LoRA-style freeze of the model whose adapters train, is not a frozen encoder."""
    write(tmp_path, {"train.py": FROZEN_ENCODER.replace(
        "optimizer = torch.optim.AdamW(denoiser.parameters(), lr=1e-4)",
        "optimizer = torch.optim.AdamW(list(denoiser.parameters()) + list(text_encoder.parameters()), lr=1e-4)")})
    assert _tl409(tmp_path, cli) == [
        (11, "`text_encoder` is trained without `torch.compile`. Try `text_encoder = torch.compile(text_encoder)` "
             "for faster steps.")]
