"""Hypothesis profiles, and the ``slow`` marker: exhaustive sweeps that the default run
(``python3 -m pytest -q -n 2``; pyproject's addopts hold ``-m "not slow"``) leaves out and CI
runs as a second step (``python3 -m pytest -q -n 2 -m "slow or hypothesis"``).

A test is slow when

- it carries ``@pytest.mark.slow`` (``pytestmark = pytest.mark.slow`` for a module,
  ``pytest.param(..., marks=pytest.mark.slow)`` for one case), or
- it is one of the cases of a parametrized test listed in :data:`SWEEPS` (``"file::test": n``, or
  a module's own ``SWEEPS = {"test": n}``) beyond the ``n`` that stay in the default run. The
  ``n`` are first those that bring the most parameter values not yet covered (so every value of
  every parameter runs by default, as far as ``n`` allows), then cases spread evenly over the
  rest; ``n = 0`` makes the whole test slow.

The two runs together run every test once. The property tests (``@given``) run in both: 20
examples by default, 100 in CI's second step (``HYPOTHESIS_PROFILE=ci``), 500 with ``thorough``.
Run one slow test by name with ``-m ""`` (or ``-m slow``): the default ``-m "not slow"`` would
deselect it.
"""
from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

_COMMON = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
settings.register_profile("default", max_examples=20, **_COMMON)
settings.register_profile("ci", max_examples=100, **_COMMON)
settings.register_profile("thorough", max_examples=500, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


def _one_thread_sessions() -> None:
    """onnxruntime sessions made by ir2onnx in tests get one intra-op thread (unless a test asks
    for more): xdist already runs a test per core, and a thread pool per session spinning beside
    the other worker's cost ~15% of the suite's CPU time (measured on 2 cores)."""
    from ir2onnx.runtime import sessions as runtime

    made = runtime.session

    def session(model, provider="cpu", threads=None, **options):
        return made(model, provider, threads or 1, **options)

    runtime.session = session


_one_thread_sessions()

# The sweeps: of each of these parametrized tests, n cases run by default, the rest are slow
# (chosen from measured durations: these held about two thirds of the suite's time).
SWEEPS: dict[str, int] = {
    "test_activations.py::test_float_activation": 10,
    "test_batch_to_space.py::test_batch_to_space_table": 12,
    "test_batch_to_space.py::test_element_types": 6,
    "test_batch_to_space.py::test_space_to_batch_table": 10,
    "test_bitwise.py::test_and_or_xor": 8,
    "test_bitwise.py::test_shifts_in_range": 8,
    "test_cli.py::test_help_has_an_example": 1,
    "test_colour.py::test_conversion": 6,
    "test_comparison.py::test_compare_broadcast": 8,
    "test_convolution_backprop_data.py::test_groups": 6,
    "test_convolution_backprop_data.py::test_table": 24,
    "test_convolution_backprop_inputs.py::test_output_shape_parameter": 4,
    "test_ctc_loss.py::test_ctc_loss": 6,
    "test_cumsum.py::test_cumsum": 10,
    "test_deformable_psroi_pooling.py::test_with_offsets": 4,
    "test_depth_to_space.py::test_depth_to_space_table": 12,
    "test_depth_to_space.py::test_space_to_depth_table": 12,
    "test_detection_output.py::test_attributes": 12,
    "test_detection_output.py::test_styles": 5,
    "test_elementwise.py::test_float_binary_broadcast": 6,
    "test_elementwise.py::test_integer_binary": 10,
    "test_embedding.py::test_offsets_runtime_everything": 2,
    "test_grid_sample.py::test_modes": 8,
    "test_harness.py::test_check_passes_on_every_sample": 0,
    "test_harness.py::test_selftest_whole_table_runs": 0,
    "test_indexing.py::test_nonzero": 6,
    "test_interpolate.py::test_nearest_sizes": 8,
    "test_interpolate.py::test_run_time_scales": 4,
    "test_interpolate.py::test_run_time_scales_nearest_modes_and_types": 4,
    "test_interpolate.py::test_runtime_sizes_from_another_map": 4,
    "test_interpolate.py::test_smooth_modes_scales": 8,
    "test_matrix_nms.py::test_matches_openvino_and_oracle": 12,
    "test_multiclass_nms.py::test_detection_head_sized": 3,
    "test_multiclass_nms.py::test_matches_openvino_and_oracle": 8,
    "test_multiclass_nms.py::test_roisnum_form": 6,
    "test_non_max_suppression.py::test_matches_openvino": 4,
    "test_normalization.py::test_group_norm": 8,
    "test_normalization.py::test_mvn": 8,
    "test_normalization.py::test_mvn_run_time_axes": 2,
    "test_onnxruntime_kernels.py::test_binary_every_element_type": 8,
    "test_onnxruntime_kernels.py::test_every_selftest_case_gets_a_cpu_session": 15,
    "test_onnxruntime_kernels.py::test_unary_every_element_type": 15,
    "test_packaging.py::test_installed_package_and_checkout_root": 0,
    "test_pad.py::test_run_time_pads": 4,
    "test_patches.py::test_dynamic_spatial_dims": 4,
    "test_patches.py::test_sweep": 12,
    "test_pooling.py::test_avg_pool": 8,
    "test_pooling.py::test_avg_pool_dynamic_output_size_computed_in_graph": 4,
    "test_pooling.py::test_max_pool": 8,
    "test_pooling.py::test_max_pool_dynamic_output_size_computed_in_graph": 3,
    "test_pooling_dilations.py::test_avg_pool16_dilations": 8,
    "test_prior_box.py::test_prior_box_clustered_ssd": 4,
    "test_prior_box.py::test_prior_box_random_attributes": 4,
    "test_prior_box.py::test_prior_box_static_folds": 6,
    "test_proposal.py::test_attributes": 6,
    "test_proposal.py::test_more_attributes": 3,
    "test_psroi_pooling.py::test_average": 4,
    "test_quantization_table_weights.py::test_nncf_samples": 2,
    "test_quantization_weights.py::test_matmul_matches_openvino_and_keeps_the_integers": 4,
    "test_rcnn_samples.py::test_ir2onnx_check_passes": 1,
    "test_rcnn_samples.py::test_padded_proposals": 1,
    "test_rcnn_samples.py::test_sample_matches_openvino": 1,
    "test_rcnn_samples.py::test_sample_matches_saved_openvino_output": 4,
    "test_real_models.py::test_dynamic_models_at_several_sizes": 2,
    "test_reduction.py::test_float": 8,
    "test_reduction.py::test_integer_sum_is_exact_and_wraps": 6,
    "test_reduction.py::test_reduce_prod_and_sum": 12,
    "test_reduction.py::test_run_time_axes": 3,
    "test_reshape.py::test_constant_pattern_table": 12,
    "test_reshape.py::test_every_element_type": 8,
    "test_reshape.py::test_runtime_pattern": 10,
    "test_reverse_roll.py::test_reverse": 6,
    "test_reverse_roll.py::test_roll_constant": 10,
    "test_roi_align.py::test_roi_align_max": 3,
    "test_roi_align_rotated.py::test_roi_align_rotated": 6,
    "test_scatter.py::test_scatter_elements_reductions_exact": 8,
    "test_scatter_nd_reductions.py::test_reductions_runtime_indices_dynamic": 8,
    "test_segment.py::test_runtime_ids_and_count": 4,
    "test_signal.py::test_dft_idft": 8,
    "test_signal_stft.py::test_stft": 8,
    "test_slicing_scatter.py::test_runtime_everything_dynamic": 8,
    "test_ssd_sample.py::test_sample_head_other_thresholds": 1,
    "test_ssd_sample.py::test_sample_matches_openvino": 2,
    "test_topk.py::test_modes": 8,
    "test_trigonometric.py::test_float_ops_match_oracle_and_openvino": 10,
    "test_unique.py::test_types_axes_sorted": 16,
}


def _hashable(value):
    try:
        hash(value)
        return value
    except TypeError:
        return repr(value)


def _kept(items: list, n: int) -> set[int]:
    """Indices (into ``items``, one parametrized test's cases) of the ``n`` kept by default."""
    values = [{(k, _hashable(v)) for k, v in getattr(getattr(item, "callspec", None), "params", {}).items()}
              for item in items]
    keep: list[int] = []
    seen: set = set()
    while len(keep) < n:  # greedy set cover: the first case that brings the most new values
        gain, best = max((len(v - seen), -i) for i, v in enumerate(values))
        if gain == 0:
            break
        keep.append(-best)
        seen |= values[-best]
    rest = [i for i in range(len(items)) if i not in keep]
    room = min(n - len(keep), len(rest))
    keep += [rest[k * len(rest) // room] for k in range(room)] if room > 0 else []
    return set(keep)


def _sweep(item) -> int | None:
    name = getattr(item, "originalname", None)
    own = getattr(getattr(item, "module", None), "SWEEPS", {})
    if name in own:
        return own[name]
    return SWEEPS.get(f"{item.path.name}::{name}")


@pytest.hookimpl(tryfirst=True)  # before -m deselects
def pytest_collection_modifyitems(config, items):
    groups: dict[tuple, list] = {}
    for item in items:
        n = _sweep(item)
        if n is not None:
            groups.setdefault((item.path, item.cls, item.originalname, n), []).append(item)
    for (*_, n), group in groups.items():
        kept = _kept(group, n)
        for i, item in enumerate(group):
            if i not in kept:
                item.add_marker(pytest.mark.slow)
