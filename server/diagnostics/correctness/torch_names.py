"""The softmax-family torch names that TL201, TL202 and TL206 (and their fixes) recognise,
resolved through the imports (`F.softmax` is `torch.nn.functional.softmax`).
"""

FUNCTIONAL_SOFTMAX = {
    "torch.nn.functional.softmax": "softmax",
    "torch.nn.functional.log_softmax": "log_softmax",
    "torch.nn.functional.softmin": "softmin",
}
# These require `dim` (they raise without it), so they only matter to TL202.
TORCH_SOFTMAX = {
    "torch.softmax": "softmax",
    "torch.log_softmax": "log_softmax",
    "torch.special.softmax": "softmax",
    "torch.special.log_softmax": "log_softmax",
}
SOFTMAX_METHODS = {"softmax", "log_softmax"}
SOFTMAX_MODULES = {"Softmax": "softmax", "LogSoftmax": "log_softmax", "Softmin": "softmin"}
