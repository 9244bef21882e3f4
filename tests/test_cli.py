import hypercuboid
from click.testing import CliRunner
from hypercuboid.cli import cli


def test_version():
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"hypercuboid, version {hypercuboid.__version__}"
