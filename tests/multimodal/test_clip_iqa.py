"""clip_image_quality_assessment and CLIPImageQualityAssessment with a tiny random CLIP saved
locally (no download): against torchmetrics 1.9 given the same model (its callable form) for one
prompt, several built-in ones and user pairs, and against the softmax formula from the model's
features; prompts and data_range checks; no download; bad input raises with the state
unchanged; 3 gloo ranks with uneven shards (one empty) == one process, in rank order."""

import functools
import warnings

import pytest
import torch
from support.doctests import package_doctests
from support.metric_tester import MetricCase, assert_rejects, assert_same, check_metric, run_distributed_cases
from support.tiny_clip import images, load_tiny_clip, save_tiny_clip, tm_pair
from torchmetrics.functional.multimodal import clip_image_quality_assessment as tm_clip_iqa
from torchmetrics.multimodal import CLIPImageQualityAssessment as TMCLIPImageQualityAssessment

from torchtally.functional.multimodal import clip_image_quality_assessment
from torchtally.multimodal import CLIPImageQualityAssessment

TOL = {"rtol": 1e-4, "atol": 1e-5}
PROMPTS = [("quality",), ("quality", "brightness", "sharpness"), (("Good photo.", "Bad photo of a cat."), "warm")]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return save_tiny_clip(str(tmp_path_factory.mktemp("tiny_clip_iqa")))


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def _formula(model_dir, pics, texts, data_range):
    """Per image and prompt pair, softmax(100 cos) of the positive prompt, computed here."""
    model, processor = load_tiny_clip(model_dir)
    with torch.no_grad():
        t = processor(text=texts, return_tensors="pt", padding=True)
        a = model.get_text_features(t["input_ids"], t["attention_mask"]).pooler_output.double()
        p = processor(images=list(pics / data_range), return_tensors="pt")
        f = model.get_image_features(p["pixel_values"]).pooler_output.double()
    a, f = a / a.norm(dim=-1, keepdim=True), f / f.norm(dim=-1, keepdim=True)
    logits = 100 * f @ a.t()
    return logits.reshape(len(pics), -1, 2).softmax(-1)[:, :, 0]


@pytest.mark.parametrize("prompts", PROMPTS, ids=["one", "three", "user"])
def test_functional_matches_torchmetrics(model_dir, prompts):
    pics = images(0, 3)
    got = clip_image_quality_assessment(pics, model_dir, data_range=255, prompts=prompts)
    want = _quiet(tm_clip_iqa, pics, tm_pair(model_dir), data_range=255, prompts=prompts)
    if isinstance(want, dict):
        assert list(got) == list(want)
        for key in want:
            assert got[key].dtype == want[key].dtype and got[key].shape == want[key].shape
    else:
        assert got.dtype == want.dtype and got.shape == want.shape
    assert_same(got, want, **TOL)


def test_the_formula_from_the_features(model_dir):
    pics = images(1, 4)
    texts = ["Good photo.", "Bad photo.", "Bright photo.", "Dark photo."]
    got = clip_image_quality_assessment(pics, model_dir, data_range=255.0, prompts=("quality", "brightness"))
    want = _formula(model_dir, pics, texts, 255.0)
    assert_same(got["quality"], want[:, 0], **TOL)
    assert_same(got["brightness"], want[:, 1], **TOL)


def test_class_matches_torchmetrics(model_dir):
    for prompts in PROMPTS:
        ours = CLIPImageQualityAssessment(model_dir, data_range=255, prompts=prompts)
        theirs = _quiet(TMCLIPImageQualityAssessment, tm_pair(model_dir), data_range=255, prompts=prompts)
        for seed, n in enumerate((2, 1, 3)):
            pics = images(10 + seed, n)
            ours.update(pics)
            theirs.update(pics)
        assert_same(ours.compute(), theirs.compute(), **TOL)
        assert list(ours.state_dict()) == []
    one = CLIPImageQualityAssessment(model_dir).update(images(3, 1)).compute()
    assert one.shape == ()  # squeezed, as torchmetrics


def test_prompts_and_data_range_checks(model_dir):
    with pytest.raises(ValueError, match="must be a tuple"):
        CLIPImageQualityAssessment(model_dir, prompts="quality")
    with pytest.raises(ValueError, match="must be one of"):
        CLIPImageQualityAssessment(model_dir, prompts=("qualityy",))
    with pytest.raises(ValueError, match="length 2"):
        clip_image_quality_assessment(images(0, 1), model_dir, prompts=(("a", "b", "c"),))
    with pytest.raises(ValueError, match="data_range"):
        CLIPImageQualityAssessment(model_dir, data_range=0)


def test_no_model_no_download():
    with pytest.raises(ValueError, match="clip_iqa.*never downloads"):
        CLIPImageQualityAssessment()
    with pytest.raises(ValueError, match="not a local directory"):
        clip_image_quality_assessment(images(0, 1), "openai/clip-vit-base-patch16")


def test_bad_input_raises_with_the_state_unchanged(model_dir):
    metric = CLIPImageQualityAssessment(model_dir, prompts=("quality", "warm")).update(images(4, 2))
    assert_rejects(metric, (images(5, 2)[0],), ValueError, "images.*N, C, H, W")
    assert_rejects(metric, (list(images(5, 2)),), TypeError, "images")
    nan = images(5, 2)
    nan[1, 0, 0, 0] = float("nan")
    assert_rejects(metric, (nan,), ValueError, "images.*NaN")


def test_docstring_examples():
    for package in ("torchtally.multimodal.clip_iqa", "torchtally.functional.multimodal.clip_iqa"):
        failed, attempted = package_doctests(package)
        assert attempted > 0 and failed == 0, package


def _iqa_cases(model_dir):
    prompts = ("quality", ("Good photo.", "Bad photo of a cat."))
    batches = [(images(20 + i, 1 + i % 3),) for i in range(6)]

    def reference(pics):
        probs = _formula(model_dir, pics, ["Good photo.", "Bad photo.", "Good photo.", "Bad photo of a cat."], 255.0)
        return {"quality": probs[:, 0], "user_defined_0": probs[:, 1]}

    return [
        MetricCase(
            "clip-iqa",
            functools.partial(CLIPImageQualityAssessment, model_dir, data_range=255.0, prompts=prompts),
            batches=batches,
            reference=reference,
            rtol=1e-4,
            atol=1e-5,
            max_collectives=3,
        )
    ]


def test_lifecycle(model_dir):
    for case in _iqa_cases(model_dir):
        check_metric(case)


@pytest.mark.distributed
def test_distributed_uneven_shards_equal_one_process(model_dir):
    threads = torch.get_num_threads()  # the ranks' thread count, for bit-identical features
    torch.set_num_threads(1)
    try:
        run_distributed_cases(_iqa_cases(model_dir))
    finally:
        torch.set_num_threads(threads)
