"""TL206 probe: a DCGAN whose discriminator ends in `nn.Sigmoid()`-free logits but whose loss
is fed `torch.sigmoid(d_real)` into `nn.BCEWithLogitsLoss`, a reward model's pairwise-preference
classifier that passes `F.softmax(...)` output to `F.cross_entropy`, and a token classifier whose
log-softmax output, bound to a variable, goes to a `CrossEntropyLoss` instance; near misses are
`F.nll_loss` of a log-softmax (the right pairing), `F.binary_cross_entropy` of a sigmoid (also
right), `F.kl_div` of log-softmax outputs (distillation), and cross-entropy on raw logits with
label smoothing."""
import torch
import torch.nn as nn
import torch.nn.functional as F

adv_criterion = nn.BCEWithLogitsLoss()
token_criterion = nn.CrossEntropyLoss(ignore_index=-100)


def discriminator_step(disc, gen, real, z, d_opt):
    d_opt.zero_grad(set_to_none=True)
    d_real = disc(real)
    d_fake = disc(gen(z).detach())
    loss_real = adv_criterion(torch.sigmoid(d_real), torch.ones_like(d_real))  # expect: TL206
    loss_fake = F.binary_cross_entropy(torch.sigmoid(d_fake), torch.zeros_like(d_fake))  # clean
    (loss_real + loss_fake).backward()
    d_opt.step()


def preference_loss(reward_model, chosen_ids, rejected_ids):
    r_chosen = reward_model(chosen_ids).squeeze(-1)
    r_rejected = reward_model(rejected_ids).squeeze(-1)
    pair_logits = torch.stack([r_chosen, r_rejected], dim=1)
    target = torch.zeros(pair_logits.size(0), dtype=torch.long, device=pair_logits.device)
    return F.cross_entropy(F.softmax(pair_logits, dim=1), target)  # expect: TL206


def token_classification_loss(model, input_ids, labels):
    logits = model(input_ids).logits
    log_probs = logits.log_softmax(dim=-1)
    loss = token_criterion(log_probs.view(-1, log_probs.size(-1)), labels.view(-1))  # expect: TL206
    nll = F.nll_loss(log_probs.view(-1, log_probs.size(-1)), labels.view(-1), ignore_index=-100)  # clean
    return loss, nll


def distill_loss(student_logits, teacher_logits, labels, T=2.0, alpha=0.5):
    soft = F.kl_div(F.log_softmax(student_logits / T, dim=-1),  # clean
                    F.log_softmax(teacher_logits / T, dim=-1), reduction="batchmean", log_target=True)
    hard = F.cross_entropy(student_logits, labels, label_smoothing=0.1)  # clean
    return alpha * soft * T * T + (1 - alpha) * hard
