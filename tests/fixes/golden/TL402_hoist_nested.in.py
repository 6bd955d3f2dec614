import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def train(model, loader, epochs=20):
    criterion = nn.MSELoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    # epochs
    for epoch in range(epochs):
        # keep the model on the GPU
        model.to(device)
        model.train()
        for window in loader:
            criterion = criterion.to(device)  # loss module too
            window = window.to(device, non_blocking=True)
            loss = criterion(model(window), window)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
    return model
