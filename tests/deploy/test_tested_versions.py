"""The deploy images and the docs name the releases the end-to-end tests build and run."""

from __future__ import annotations

from deploy_checks import COMPOSE_FILE, DEPLOY_DIR, EXPORTERS_DIR, K8S_DIR, REPO, load_yaml

from tests.backends.binaries import versions

COLLECTOR_IMAGE = "otel/opentelemetry-collector-contrib"
JAEGER_IMAGE = "jaegertracing/jaeger"


def _compose_images(repository: str) -> set[str]:
    services = load_yaml(COMPOSE_FILE)["services"]
    images = {str(service["image"]) for service in services.values()}
    return {image for image in images if image.rpartition(":")[0] == repository}


def test_compose_collectors_run_the_tested_collector_release() -> None:
    """Every Collector in compose.yaml runs the contrib image of the release the tests build."""
    assert _compose_images(COLLECTOR_IMAGE) == {
        f"{COLLECTOR_IMAGE}:{versions()['COLLECTOR_VERSION']}"
    }


def test_compose_jaeger_runs_the_tested_jaeger_release() -> None:
    """compose.yaml's Jaeger is the Jaeger v2 release the tests build."""
    assert _compose_images(JAEGER_IMAGE) == {f"{JAEGER_IMAGE}:{versions()['JAEGER_VERSION']}"}


def test_k8s_gateway_runs_the_tested_collector_release() -> None:
    """The Kubernetes gateway's container image is the tested Collector release."""
    deployment = load_yaml(K8S_DIR / "deployment.yaml")
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert container["image"] == f"{COLLECTOR_IMAGE}:{versions()['COLLECTOR_VERSION']}"


def test_docs_name_the_tested_releases() -> None:
    """The READMEs that show image tags or versions name exactly the tested releases."""
    pinned = versions()
    for path in (DEPLOY_DIR / "README.md", EXPORTERS_DIR / "README.md", REPO / "README.md"):
        text = path.read_text(encoding="utf-8")
        assert f"{pinned['COLLECTOR_VERSION']}" in text, path.name
        assert f"{pinned['JAEGER_VERSION']}" in text, path.name
        for image in (COLLECTOR_IMAGE, JAEGER_IMAGE):
            tags = {
                word.rstrip("`.,)").rpartition(":")[2]
                for word in text.split()
                if word.strip("`(").startswith(image + ":")
            }
            wanted = pinned["COLLECTOR_VERSION" if image == COLLECTOR_IMAGE else "JAEGER_VERSION"]
            assert tags <= {wanted}, (path.name, image, tags)
