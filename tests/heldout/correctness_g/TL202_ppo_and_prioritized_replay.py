"""TL202 probe: an RL codebase (PPO with a frozen reference policy, DQN-style prioritized replay):
the policy's action distribution taken with `torch.softmax(logits, dim=0)` over a `[B, A]` logit
batch (a shape comment says so), the reference model's `F.log_softmax(ref_logits, dim=0)` for a
KL penalty on `[B, T, V]` token logits (unpacked as `B, T, V = ref_logits.shape`), and an
`nn.Softmax(dim=0)` head applied to a `Linear` of `h.flatten(1)`; near misses are softmax over
`dim=0` of one-dimensional tensors (replay priorities, the per-episode returns flattened with
`.view(-1)`, a `[N]` vector of candidate scores from `.sum(-1)`), and `dim=0` on a single
observation's output after `.squeeze(0)` (its rank is not known: the action vector, not a batch)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class PolicyHead(nn.Module):
    def __init__(self, hidden, n_actions):
        super().__init__()
        self.fc = nn.Linear(hidden, n_actions)
        self.act = nn.Softmax(dim=0)  # expect: TL202

    def forward(self, h):
        h = h.flatten(1)
        return self.act(self.fc(h))


def ppo_policy_loss(policy, obs, actions, old_log_probs, advantages, clip=0.2):
    logits = policy(obs)  # [B, A]
    probs = torch.softmax(logits, dim=0)  # expect: TL202
    log_probs = torch.log(probs.gather(1, actions.unsqueeze(1)).squeeze(1) + 1e-8)
    ratio = (log_probs - old_log_probs).exp()
    return -torch.min(ratio * advantages, ratio.clamp(1 - clip, 1 + clip) * advantages).mean()


def kl_penalty_step(policy_model, ref_model, input_ids, attention_mask, rewards, optimizer, beta=0.05):
    logits = policy_model(input_ids, attention_mask=attention_mask).logits
    with torch.no_grad():
        ref_logits = ref_model(input_ids, attention_mask=attention_mask).logits
    log_p = F.log_softmax(logits, dim=-1)  # clean
    B, T, V = ref_logits.shape
    log_q = F.log_softmax(ref_logits, dim=0)  # expect: TL202
    kl = (log_p.exp() * (log_p - log_q)).sum(-1).mean()
    loss = -(rewards.mean() - beta * kl)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    return kl.detach()


class PrioritizedReplay:
    def __init__(self, capacity, alpha=0.6):
        self.priorities = torch.zeros(capacity)
        self.alpha = alpha
        self.size = 0

    def sample(self, batch_size):
        p = torch.softmax(self.priorities[: self.size] * self.alpha, dim=0)  # clean
        return torch.multinomial(p, batch_size, replacement=True)


def episode_weights(returns: torch.Tensor, temperature=1.0):
    flat = returns.view(-1)
    return F.softmax(flat / temperature, dim=0)  # clean


def pick_candidate(candidate_feats: torch.Tensor, query: torch.Tensor):
    scores = (candidate_feats * query).sum(-1)
    return torch.softmax(scores, dim=0).argmax()  # clean


@torch.no_grad()
def act(policy, obs):
    policy.eval()
    single = policy(obs.unsqueeze(0)).squeeze(0)
    return torch.softmax(single, dim=0).multinomial(1).item()  # clean
