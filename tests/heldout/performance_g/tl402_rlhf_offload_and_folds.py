"""TL402 probe: an RLHF loop and a tabular k-fold script: the reward model moved to the GPU with
`.to(device)` inside each PPO iteration, the reference policy moved with `.to(device)` inside the
rollout loop, and a loss module built once per fold but moved with `.cuda()` inside the epoch loop
(rebound by the outer loop only: the inner one repeats the move); near misses are the policy moved
before the loops, a new MLP built and moved once per fold (a fresh module each iteration must be
placed) and its `memory_format` conversion, batches and rewards moved inside the loops, and the best
model moved to the CPU after the loop."""
import torch
import torch.nn as nn
from sklearn.model_selection import KFold
from torch.utils.data import DataLoader, Subset


def ppo_iterations(policy, ref_policy, reward_model, prompts_loader, optimizer, device, iters):
    policy.to(device)  # clean
    for it in range(iters):
        reward_model.to(device)  # expect: TL402
        for prompts in prompts_loader:
            prompts = prompts.to(device)  # clean
            ref_policy.to(device)  # expect: TL402
            with torch.no_grad():
                responses = policy.generate(prompts, max_new_tokens=64)
                ref_logits = ref_policy(responses).logits
                rewards = reward_model(responses).squeeze(-1).to(device)  # clean
            logits = policy(responses).logits
            kl = (logits.log_softmax(-1) - ref_logits.log_softmax(-1)).mean()
            loss = -(rewards.mean() - 0.1 * kl)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()


class MLP(nn.Module):
    def __init__(self, d_in, d_hidden=256):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, d_hidden), nn.ReLU(), nn.Linear(d_hidden, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)


def kfold(dataset, d_in, device, folds=5, epochs=20):
    scores = []
    for fold, (tr, va) in enumerate(KFold(folds, shuffle=True, random_state=0).split(range(len(dataset)))):
        model = MLP(d_in).to(device)  # clean
        model = model.to(memory_format=torch.preserve_format)  # clean
        criterion = nn.MSELoss()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        train_loader = DataLoader(Subset(dataset, tr), batch_size=512, shuffle=True, num_workers=4, pin_memory=True)
        for epoch in range(epochs):
            criterion.cuda()  # expect: TL402
            for x, y in train_loader:
                x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)  # clean
                loss = criterion(model(x), y)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
        scores.append(model)
    best = scores[-1]
    best.to("cpu")  # clean
    return best
