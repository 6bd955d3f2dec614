"""One real server per test module and client profile (VS Code: UTF-16, pushed
diagnostics; Neovim 0.11: UTF-8, pulled diagnostics)."""
from __future__ import annotations

import pytest
import pytest_asyncio
import pytest_lsp
from pytest_lsp import LanguageClient

from tests.lsp.lsp_session import PROFILES, Session, open_session, server_config


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    """A project folder with no pyproject.toml of its own."""
    return tmp_path_factory.mktemp("workspace")


@pytest_lsp.fixture(config=server_config(), scope="module", params=PROFILES)
async def client(request, lsp_client: LanguageClient, workspace):
    lsp_client.session = await open_session(lsp_client, request.param, workspace)
    yield
    await lsp_client.shutdown_session()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def editor(client: LanguageClient) -> Session:
    return client.session
