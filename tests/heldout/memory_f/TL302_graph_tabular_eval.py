"""TL302 probe: a k-fold tabular MLP whose out-of-fold predictions are computed after `model.eval()` with
grad on, a graph net's validation loop over neighbour-sampled subgraphs (named `validate`) and a PPO
evaluation of the greedy policy after `policy.eval()`; near misses decorate the graph helper with
`@torch.no_grad()`, evaluate the policy under `torch.inference_mode()`, and compute a gradient penalty
(which needs the graph) in a function whose name happens to contain `valid`."""
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


def out_of_fold(folds, make_model, fit, n_rows):
    oof = np.zeros(n_rows, dtype=np.float32)
    for train_idx, val_idx, val_x in folds:
        model: nn.Module = make_model()
        fit(model, train_idx)
        model.eval()
        oof[val_idx] = torch.sigmoid(model(val_x)).squeeze(-1).detach().cpu().numpy()  # expect: TL302
    return oof


def validate(gnn, subgraph_loader):
    gnn.eval()
    correct = 0
    for batch in subgraph_loader:
        out = gnn(batch.x, batch.edge_index)[: batch.batch_size]  # expect: TL302
        correct += int((out.argmax(-1) == batch.y[: batch.batch_size]).sum())
    return correct


@torch.no_grad()
def validate_no_grad(gnn, subgraph_loader):
    gnn.eval()
    outs = [gnn(b.x, b.edge_index)[: b.batch_size].argmax(-1) for b in subgraph_loader]  # clean
    return torch.cat(outs)


def greedy_return(policy, env, episodes=10):
    policy.eval()
    returns = []
    for _ in range(episodes):
        obs, done, total = env.reset(), False, 0.0
        while not done:
            action = policy(torch.as_tensor(obs, dtype=torch.float32)).argmax(-1)  # expect: TL302
            obs, reward, done, _ = env.step(int(action))
            total += reward
        returns.append(total)
    return returns


def greedy_return_inference(policy, env, episodes=10):
    policy.eval()
    returns = []
    with torch.inference_mode():
        for _ in range(episodes):
            obs, done, total = env.reset(), False, 0.0
            while not done:
                action = policy(torch.as_tensor(obs, dtype=torch.float32)).argmax(-1)  # clean
                obs, reward, done, _ = env.step(int(action))
                total += reward
            returns.append(total)
    return returns


def gradient_penalty_valid_region(critic, real, fake):
    alpha = torch.rand(real.size(0), 1, device=real.device)
    mixed = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    score = critic(mixed)  # clean
    grads = torch.autograd.grad(score.sum(), mixed, create_graph=True)[0]
    return ((grads.norm(2, dim=1) - 1) ** 2).mean()
