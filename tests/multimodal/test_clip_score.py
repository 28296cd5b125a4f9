"""clip_score and CLIPScore with a tiny random CLIP saved locally (no download): against
torchmetrics 1.9 given the same model (its callable form; support.tiny_clip), image-text,
image-image and text-text, and against the formula from the model's features directly; the
model from a local directory, a callable or a (model, processor) pair, a hub name refused;
bad input raises with the state unchanged; 3 gloo ranks with uneven shards == one process."""

import functools
import warnings

import pytest
import torch
from support.doctests import package_doctests
from support.metric_tester import MetricCase, assert_rejects, assert_same, check_metric, run_distributed_cases
from support.tiny_clip import CAPTIONS, images, load_tiny_clip, save_tiny_clip, tm_pair
from torchmetrics.functional.multimodal import clip_score as tm_clip_score
from torchmetrics.multimodal import CLIPScore as TMCLIPScore

from torchtally.functional.multimodal import clip_score
from torchtally.multimodal import CLIPScore

TOL = {"rtol": 1e-5, "atol": 1e-4}  # float32 features; the cosine summed in float64 here


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return save_tiny_clip(str(tmp_path_factory.mktemp("tiny_clip")))


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def _pair_scores(model_dir, source, target):
    """100 cos(E_source, E_target) per pair (float64), from the model's features, computed here."""
    model, processor = load_tiny_clip(model_dir)

    def features(side):
        with torch.no_grad():
            if isinstance(side, torch.Tensor):
                batch = processor(images=list(side), return_tensors="pt")
                out = model.get_image_features(batch["pixel_values"])
            else:
                batch = processor(text=side, return_tensors="pt", padding=True)
                out = model.get_text_features(batch["input_ids"], batch["attention_mask"])
        f = (out if isinstance(out, torch.Tensor) else out.pooler_output).double()
        return f / f.norm(dim=-1, keepdim=True)

    return 100 * (features(source) * features(target)).sum(-1)


def _features_formula(model_dir, source, target):
    """max(100 mean cos, 0) over the pairs."""
    return max(float(_pair_scores(model_dir, source, target).mean()), 0.0)


PAIRS = {
    "image-text": lambda: (images(0, 4), CAPTIONS[:4]),
    "text-image": lambda: (CAPTIONS[2:5], images(1, 3)),
    "image-image": lambda: (images(2, 3), images(3, 3)),
    "text-text": lambda: (CAPTIONS[:5], CAPTIONS[3:8]),
}


@pytest.mark.parametrize("kind", sorted(PAIRS))
def test_functional_matches_torchmetrics_and_the_formula(model_dir, kind):
    source, target = PAIRS[kind]()
    got = clip_score(source, target, model_dir)
    want = _quiet(tm_clip_score, source, target, tm_pair(model_dir))
    assert got.dtype == want.dtype == torch.float32 and got.shape == want.shape == ()
    assert_same(got, want.detach(), **TOL)
    assert_same(got, _features_formula(model_dir, source, target), **TOL)


def test_single_items_and_a_list_of_images(model_dir):
    pics = images(4, 2)
    assert_same(
        clip_score(pics[0], CAPTIONS[0], model_dir),
        _quiet(tm_clip_score, pics[0], CAPTIONS[0], tm_pair(model_dir)).detach(),
        **TOL,
    )
    assert_same(clip_score(list(pics), CAPTIONS[:2], model_dir), clip_score(pics, CAPTIONS[:2], model_dir), rtol=1e-6)


def test_class_matches_torchmetrics(model_dir):
    ours, theirs = CLIPScore(model_dir), _quiet(TMCLIPScore, tm_pair(model_dir))
    for kind in sorted(PAIRS):
        source, target = PAIRS[kind]()
        assert_same(ours(source, target), _quiet(theirs, source, target).detach(), **TOL)
    got, want = ours.compute(), theirs.compute()
    assert got.dtype == want.dtype and got.shape == want.shape
    assert_same(got, want.detach(), **TOL)
    assert int(ours.n_samples) == int(theirs.n_samples)
    assert ours.score.dtype == torch.float64 and list(ours.state_dict()) == []


def test_the_model_from_a_callable_or_a_pair(model_dir):
    source, target = PAIRS["image-text"]()
    want = clip_score(source, target, model_dir)
    assert_same(clip_score(source, target, tm_pair(model_dir)), want, rtol=1e-6)
    assert_same(CLIPScore(load_tiny_clip(model_dir)).update(source, target).compute(), want, rtol=1e-6)


def test_long_captions_are_cut_with_a_warning(model_dir):
    long = " ".join(["photo"] * 40)
    with pytest.warns(UserWarning, match="longer than max_position_embeddings"):
        got = clip_score(long, "good photo", model_dir)
    want = _quiet(tm_clip_score, long, "good photo", tm_pair(model_dir))
    assert_same(got, want.detach(), **TOL)


def test_no_model_no_download(model_dir):
    with pytest.raises(ValueError, match="not a local directory.*never downloads"):
        CLIPScore()
    with pytest.raises(ValueError, match="not a local directory"):
        clip_score("a", "b", "openai/clip-vit-base-patch16")
    model, _ = load_tiny_clip(model_dir)
    with pytest.raises(TypeError, match="processor is needed"):
        CLIPScore(model)
    with pytest.raises(TypeError, match="get_image_features"):
        CLIPScore(lambda: (torch.nn.Linear(2, 2), None))


def test_bad_input_raises_with_the_state_unchanged(model_dir):
    metric = CLIPScore(model_dir).update(images(5, 2), CAPTIONS[:2])
    assert_rejects(metric, (images(6, 3), CAPTIONS[:2]), ValueError, "same")
    assert_rejects(metric, ([], CAPTIONS[:2]), ValueError, "source.*empty")
    assert_rejects(metric, (images(6, 2), [1, 2]), TypeError, "target")
    assert_rejects(metric, (images(6, 2)[0, 0], CAPTIONS[:2]), ValueError, "source.*3d")
    assert_rejects(metric, (images(6, 2).numpy(), CAPTIONS[:2]), TypeError, "source")


def test_docstring_examples():
    for package in ("torchtally.multimodal.clip_score", "torchtally.functional.multimodal.clip_score"):
        failed, attempted = package_doctests(package)
        assert attempted > 0 and failed == 0, package


def _clip_cases(model_dir):
    batches = [(images(10 + i, 1 + i % 3), CAPTIONS[i : i + 1 + i % 3]) for i in range(5)]
    batches += [(CAPTIONS[1:3], CAPTIONS[4:6])]  # text-text too

    def reference(batches):
        scores = torch.cat([_pair_scores(model_dir, source, target) for source, target in batches])
        return max(float(scores.mean()), 0.0)

    return [
        MetricCase(
            "clip-score",
            functools.partial(CLIPScore, model_dir),
            batches=batches,
            reference=reference,
            reference_on_batches=True,
            rtol=1e-5,
            atol=1e-4,
            max_collectives=3,
        )
    ]


def test_lifecycle(model_dir):
    for case in _clip_cases(model_dir):
        check_metric(case)


@pytest.mark.distributed
def test_distributed_uneven_shards_equal_one_process(model_dir):
    # the ranks run torch on one thread; so does this process's comparison, so that the model's
    # float32 features (whose sums' order follows the thread count) are bit-identical
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        run_distributed_cases(_clip_cases(model_dir))
    finally:
        torch.set_num_threads(threads)
