"""Model-zoo benchmark: exportlint's findings against what the real exporters do to real models.

    python benchmarks/bench_zoo.py collect [--only NAME ...] [--jobs N] [--refresh]
    python benchmarks/bench_zoo.py score
    python benchmarks/bench_zoo.py            # collect (cached entries reused), then score

Ground truth (``collect``)
-------------------------
Every model of ``MODELS`` (timm, torchvision, transformers; random init, nothing downloaded) runs
alone in a fresh subprocess (``_worker``) with a time limit and an address-space limit, in eval
mode, seeded, under ``torch.no_grad()``:

1. eager forward on an example input A (line coverage of the three packages recorded with
   ``sys.settrace`` restricted to their files) and on a second input B of another size (other
   batch; other H/W or sequence length where the model allows it);
2. ``torch.export.export`` (non-strict, the default) with ``Dim.AUTO`` on batch (+ H/W or
   sequence).  A failure is attributed to the *innermost frame inside the package sources* found
   on the exception chain's tracebacks (``__cause__``/``__context__``, dynamo's ``real_stack``),
   falling back to ``File "...", line N`` locations in the messages.  On success the
   ExportedProgram's ``.module()`` runs on B and is compared with eager B
   (match / mismatch / rejects B);
3. ``torch.jit.trace`` on A with every ``TracerWarning`` recorded
   (``warnings.catch_warnings(record=True)`` + ``simplefilter("always")``; the warning's
   filename/lineno is the package line), then the traced module on B against eager B
   (match / diverges / fails).

Specialising lines: while exporting, a ``logging.Handler`` is attached to the
``torch.fx.experimental.symbolic_shapes`` logger at INFO.  The shape environment logs every guard
it adds from ``ShapeEnv._log_guard``, synchronously, inside the call that caused it, so the handler
reads the guard's sympy expression from that frame's locals and the innermost package frame from
the live Python stack (the logged "(file:line in fn)" location itself points into torch, e.g.
``_export/non_strict_utils.py``, and is useless).  After export, each guard whose free symbols are
all declared-dynamic input dims is evaluated with B's sizes (symbol -> source via
``ShapeEnv.source_to_var``); the package lines of guards that B violates are the lines that made the
export "pass" only by fixing/narrowing a dim declared dynamic (``Eq(s53, 64)`` from
``_assert(H == self.img_size[0])``, ``Eq((H//16)*(W//16), 16)`` from a reshape to a fixed token
count, ...).  Guards the exporter marks "[guard suppressed]" are ignored.  Such a guard is
reported where it is *added*, i.e. at the consuming op (``view``/``reshape``/``conv``/``cat``),
which is often a few lines below the Python arithmetic that fixed the size.  Every declared dim
differs between A and B (batch 2 -> 3, H/W, length), and A never has a dim of size 1 (``Dim.AUTO``
would specialise it by the 0/1 rule, not because of the model).  Whether each declared
dim stayed symbolic is read from the ExportedProgram's placeholder shapes.

Score (``score``)
-----------------
Runs the real CLI (``exportlint --format json --no-cache --exit-zero --target export`` and again
with ``--target trace``) over the three package source trees the models ran (timm and torchvision
whole; transformers without the ``models/<type>/`` directories of architectures no zoo model ran,
which cannot hold a ground-truth line or a false alarm and would triple the lint time), then reports

* export failure-line recall: distinct package lines where ``torch.export`` failed that have a
  finding (any code) whose span ``[line, end_line]`` overlaps the statement starting on that line
  (Python reports a multi-line statement at its first line; for ``if``/``for``/``while`` the header);
* trace: TracerWarning-line recall over the traces that diverged from eager on B or failed on B
  (trace-target findings); jit.trace failure lines likewise;
* specialising lines: how many have an export-target finding;
* false alarms: error-severity findings (severity as reported for that target) on lines executed
  by models that exported without specialisation and matched eager (export target) / traced and
  matched eager (trace target).  Lines that are also a ground-truth line of another model are
  listed but counted apart.

torchvision stand-in
--------------------
The torchvision wheel's compiled extension needs CUDA libraries that this CPU machine lacks, so
``import torchvision`` fails.  The benchmark downloads the wheel (``pip download --no-deps
torchvision==0.29.1``) into a cache directory (``$EXPORTLINT_BENCH_CACHE``, default
``<tmp>/exportlint-bench``), unpacks its ``torchvision/`` package unchanged, and imports *those*
sources with ``torch.ops.load_library`` patched so that ``_C_stable.so`` is not loaded (the other
``.so`` files fail to load as if missing).  Instead, the ``torchvision::`` op schemas are defined with
``torch.library`` and given **pure-Python CPU stand-ins** for ``nms`` and ``roi_align`` (the other
compiled ops raise ``NotImplementedError``; no model of the zoo calls them).  torchvision's own
``_meta_registrations.py`` then registers the fake/meta kernels (``nms`` returns an unbacked
size), so torch.export treats the ops as opaque custom ops exactly as with the real extension.
exportlint lints that same unpacked directory, so line numbers match.  timm imports torchvision
(``timm/layers/create_norm.py``), so timm runs on the stand-in too.  torchvision needs ``pillow``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ZOO = ROOT / "benchmarks" / "zoo"
GROUND_TRUTH = ZOO / "ground_truth.json"
CACHE = Path(os.environ.get("EXPORTLINT_BENCH_CACHE", Path(tempfile.gettempdir()) / "exportlint-bench"))
TV_VERSION = "0.29.1"
PACKAGES = ("timm", "transformers", "torchvision")
SEED = 0
STANDIN_NOTE = ("torchvision's compiled ops are pure-Python stand-ins (nms, roi_align via torch.library; "
                "fake kernels from torchvision's own _meta_registrations.py)")

# --------------------------------------------------------------------------------------------
# The zoo.  Each entry: name -> spec.  kind selects the inputs (see make_inputs); dyn lists the
# dims made Dim.AUTO besides batch ("hw": image H/W, "seq": sequence length, "t": video frames).
# --------------------------------------------------------------------------------------------


def _timm(name, size=64, size_b=96, dyn="hw", **kw):
    return {"lib": "timm", "arch": name, "kind": "image", "size": size, "size_b": size_b, "dyn": dyn, "kw": kw}


def _tv(name, kind="image", size=64, size_b=96, dyn="hw", **kw):
    return {"lib": "torchvision", "arch": name, "kind": kind, "size": size, "size_b": size_b, "dyn": dyn, "kw": kw}


def _hf(model_type, kind="text", cls="AutoModel", dyn="seq", size=32, size_b=48, const=None, **cfg):
    return {"lib": "transformers", "arch": model_type, "kind": kind, "cls": cls, "dyn": dyn, "cfg": cfg,
            "size": size, "size_b": size_b, "const": const or {}}


VIT64 = dict(img_size=64, dynamic_img_size=True)
# Detection models: 3 classes (random init gives ~uniform scores, so boxes survive the score threshold
# and NMS / RoI paths really run) and small candidate counts to keep the pure-Python NMS cheap.
RCNN = dict(size=96, min_size=128, max_size=160, num_classes=3, rpn_pre_nms_top_n_test=200,
            rpn_post_nms_top_n_test=100, box_detections_per_img=20)
ONE_STAGE = dict(size=96, min_size=128, max_size=160, num_classes=3, topk_candidates=50, detections_per_img=20)
MODELS: dict[str, dict] = {
    # ---- timm: CNNs (H/W dynamic) ----
    "timm/resnet18": _timm("resnet18"),
    "timm/resnet10t": _timm("resnet10t"),
    "timm/resnet26d": _timm("resnet26d"),
    "timm/efficientnet_b0": _timm("efficientnet_b0"),
    "timm/mobilenetv3_small_050": _timm("mobilenetv3_small_050"),
    "timm/mobilenetv2_050": _timm("mobilenetv2_050"),
    "timm/convnext_atto": _timm("convnext_atto"),
    "timm/regnety_002": _timm("regnety_002"),
    "timm/regnetz_b16": _timm("regnetz_b16"),
    "timm/ghostnet_100": _timm("ghostnet_100"),
    "timm/ghostnetv2_100": _timm("ghostnetv2_100"),
    "timm/poolformer_s12": _timm("poolformer_s12"),
    "timm/rexnet_100": _timm("rexnet_100"),
    "timm/hrnet_w18_small": _timm("hrnet_w18_small"),
    "timm/dla34": _timm("dla34"),
    "timm/densenet121": _timm("densenet121"),
    "timm/nf_resnet26": _timm("nf_resnet26"),
    "timm/ese_vovnet19b_dw": _timm("ese_vovnet19b_dw"),
    "timm/selecsls42b": _timm("selecsls42b"),
    "timm/res2net50_26w_4s": _timm("res2net50_26w_4s"),
    "timm/skresnet18": _timm("skresnet18"),
    "timm/resnest14d": _timm("resnest14d"),
    "timm/lcnet_050": _timm("lcnet_050"),
    "timm/hgnetv2_b0": _timm("hgnetv2_b0"),
    "timm/dpn68": _timm("dpn68"),
    "timm/cspresnet50": _timm("cspresnet50"),
    "timm/inception_v3": _timm("inception_v3", size=96, size_b=128),
    "timm/edgenext_xx_small": _timm("edgenext_xx_small"),
    "timm/fastvit_t8": _timm("fastvit_t8"),
    "timm/repvit_m1": _timm("repvit_m1"),
    "timm/mobilevit_xxs": _timm("mobilevit_xxs"),
    "timm/mobilevitv2_050": _timm("mobilevitv2_050"),
    "timm/efficientformerv2_s0": _timm("efficientformerv2_s0", dyn="", img_size=64),
    "timm/efficientvit_b0": _timm("efficientvit_b0"),
    "timm/inception_next_atto": _timm("inception_next_atto"),
    "timm/mambaout_femto": _timm("mambaout_femto"),
    "timm/starnet_s050": _timm("starnet_s050"),
    "timm/sequencer2d_s": _timm("sequencer2d_s"),
    "timm/tf_efficientnet_b0": _timm("tf_efficientnet_b0"),
    "timm/mixnet_s": _timm("mixnet_s"),
    "timm/tresnet_m": _timm("tresnet_m"),
    "timm/xception41": _timm("xception41"),
    "timm/botnet26t_256": _timm("botnet26t_256", dyn="", img_size=64),
    "timm/lambda_resnet26t": _timm("lambda_resnet26t", size=64, size_b=96, img_size=64),
    # ---- timm: ViT-style ----
    "timm/vit_tiny_patch16_224": _timm("vit_tiny_patch16_224", **VIT64),
    "timm/deit_tiny_distilled_patch16_224": _timm("deit_tiny_distilled_patch16_224", **VIT64),
    "timm/eva02_tiny_patch14_224": _timm("eva02_tiny_patch14_224", size=56, size_b=84, img_size=56,
                                         dynamic_img_size=True),
    "timm/flexivit_small": _timm("flexivit_small", img_size=64, dynamic_img_size=True, patch_size=16),
    "timm/vit_small_patch16_rope_224": _timm("vit_small_patch16_rope_224", **VIT64),
    "timm/vit_little_patch16_reg1_gap_256": _timm("vit_little_patch16_reg1_gap_256", **VIT64),
    "timm/vit_relpos_small_patch16_224": _timm("vit_relpos_small_patch16_224", dyn="", img_size=64),
    "timm/beit_base_patch16_224": _timm("beit_base_patch16_224", dyn="", img_size=64),
    "timm/swin_tiny_patch4_window7_224": _timm("swin_tiny_patch4_window7_224", size=224, size_b=224, dyn=""),
    "timm/levit_128s": _timm("levit_128s", img_size=64),
    "timm/mixer_s16_224": _timm("mixer_s16_224", dyn="", img_size=64),
    "timm/cait_xxs24_224": _timm("cait_xxs24_224", dyn="", img_size=64),
    "timm/convit_tiny": _timm("convit_tiny", dyn="", img_size=64),
    "timm/pit_ti_224": _timm("pit_ti_224", img_size=64),
    "timm/twins_pcpvt_small": _timm("twins_pcpvt_small", img_size=64),
    "timm/xcit_nano_12_p16_224": _timm("xcit_nano_12_p16_224", img_size=64),
    "timm/pvt_v2_b0": _timm("pvt_v2_b0"),
    "timm/efficientformer_l1": _timm("efficientformer_l1", size=224, dyn=""),
    "timm/tiny_vit_5m_224": _timm("tiny_vit_5m_224", size=224, dyn=""),
    "timm/davit_tiny": _timm("davit_tiny", size=64, size_b=96),
    "timm/coatnet_nano_rw_224": _timm("coatnet_nano_rw_224", dyn="", img_size=64),
    "timm/gcvit_xxtiny": _timm("gcvit_xxtiny", dyn="", img_size=64),
    "timm/nest_tiny": _timm("nest_tiny", dyn="", img_size=64),
    "timm/efficientvit_m0": _timm("efficientvit_m0", dyn="", img_size=64),
    # ---- torchvision: classification ----
    "tv/resnet18": _tv("resnet18"),
    "tv/mobilenet_v3_small": _tv("mobilenet_v3_small"),
    "tv/efficientnet_b0": _tv("efficientnet_b0"),
    "tv/regnet_y_400mf": _tv("regnet_y_400mf"),
    "tv/shufflenet_v2_x0_5": _tv("shufflenet_v2_x0_5"),
    "tv/squeezenet1_1": _tv("squeezenet1_1"),
    "tv/mnasnet0_5": _tv("mnasnet0_5"),
    "tv/densenet121": _tv("densenet121"),
    "tv/googlenet": _tv("googlenet", init_weights=False),
    "tv/inception_v3": _tv("inception_v3", size=96, size_b=128, init_weights=False, aux_logits=False),
    "tv/convnext_tiny": _tv("convnext_tiny"),
    "tv/swin_t": _tv("swin_t"),
    "tv/swin_v2_t": _tv("swin_v2_t"),
    "tv/vit_b_16": _tv("vit_b_16", size=224, size_b=224, dyn=""),
    "tv/maxvit_t": _tv("maxvit_t", size=224, size_b=224, dyn=""),
    # ---- torchvision: detection / segmentation / keypoints (list of 2 images; H/W dynamic) ----
    "tv/fasterrcnn_mobilenet_v3_large_fpn": _tv("fasterrcnn_mobilenet_v3_large_fpn", "det", **RCNN),
    "tv/fasterrcnn_resnet50_fpn": _tv("fasterrcnn_resnet50_fpn", "det", **RCNN),
    "tv/maskrcnn_resnet50_fpn": _tv("maskrcnn_resnet50_fpn", "det", **RCNN),
    "tv/keypointrcnn_resnet50_fpn": _tv("keypointrcnn_resnet50_fpn", "det", **dict(RCNN, num_classes=2)),
    "tv/retinanet_resnet50_fpn": _tv("retinanet_resnet50_fpn", "det", **ONE_STAGE),
    "tv/fcos_resnet50_fpn": _tv("fcos_resnet50_fpn", "det", **ONE_STAGE),
    "tv/ssd300_vgg16": _tv("ssd300_vgg16", "det", size=96, num_classes=3, score_thresh=0.01, topk_candidates=50,
                           detections_per_img=20),
    "tv/ssdlite320_mobilenet_v3_large": _tv("ssdlite320_mobilenet_v3_large", "det", size=96, num_classes=3,
                                            score_thresh=0.01, topk_candidates=50, detections_per_img=20),
    "tv/deeplabv3_mobilenet_v3_large": _tv("deeplabv3_mobilenet_v3_large", "seg"),
    "tv/fcn_resnet50": _tv("fcn_resnet50", "seg"),
    "tv/lraspp_mobilenet_v3_large": _tv("lraspp_mobilenet_v3_large", "seg"),
    # ---- torchvision: video / optical flow ----
    "tv/r3d_18": _tv("r3d_18", "video", size=32, size_b=48),
    "tv/r2plus1d_18": _tv("r2plus1d_18", "video", size=32, size_b=48),
    "tv/s3d": _tv("s3d", "video", size=224, size_b=224, dyn=""),
    "tv/mvit_v2_s": _tv("mvit_v2_s", "video", size=224, size_b=224, dyn=""),
    "tv/raft_small": _tv("raft_small", "flow", size=128, size_b=160),
    # ---- transformers: text (batch + sequence length dynamic) ----
    "hf/bert": _hf("bert"),
    "hf/roberta": _hf("roberta"),
    "hf/distilbert": _hf("distilbert", dim=32, n_layers=2, n_heads=4, hidden_dim=37),
    "hf/albert": _hf("albert", embedding_size=16),
    "hf/electra": _hf("electra", embedding_size=16),
    "hf/deberta-v2": _hf("deberta-v2"),
    "hf/mpnet": _hf("mpnet"),
    "hf/mobilebert": _hf("mobilebert", embedding_size=16, intra_bottleneck_size=16, num_feedforward_networks=1,
                         true_hidden_size=16),
    "hf/funnel": _hf("funnel", num_hidden_layers=None, block_sizes=[1, 1], d_model=32, n_head=4, d_head=8, d_inner=37),
    "hf/longformer": _hf("longformer", attention_window=4),
    "hf/roformer": _hf("roformer"),
    "hf/esm": _hf("esm", pad_token_id=1, mask_token_id=2),
    "hf/xlnet": _hf("xlnet", max_position_embeddings=None, d_model=32, n_layer=2, n_head=4, d_inner=37),
    "hf/gpt2": _hf("gpt2"),
    "hf/gpt_neox": _hf("gpt_neox"),
    "hf/gptj": _hf("gptj", rotary_dim=4),
    "hf/llama": _hf("llama", num_key_value_heads=2),
    "hf/mistral": _hf("mistral", num_key_value_heads=2, sliding_window=4),
    "hf/qwen2": _hf("qwen2", num_key_value_heads=2),
    "hf/qwen3": _hf("qwen3", num_key_value_heads=2, head_dim=8),
    "hf/phi": _hf("phi"),
    "hf/phi3": _hf("phi3", num_key_value_heads=2, pad_token_id=0),
    "hf/gemma2": _hf("gemma2", num_key_value_heads=2, head_dim=8),
    "hf/opt": _hf("opt", ffn_dim=37, word_embed_proj_dim=32),
    "hf/bloom": _hf("bloom", n_layer=2, n_head=4),
    "hf/falcon": _hf("falcon"),
    "hf/mixtral": _hf("mixtral", num_key_value_heads=2, num_local_experts=4, num_experts_per_tok=2),
    "hf/mamba": _hf("mamba", state_size=4, expand=2, conv_kernel=4),
    "hf/biogpt": _hf("biogpt"),
    "hf/t5": _hf("t5", kind="seq2seq", d_model=32, d_ff=37, num_layers=2, num_heads=4, d_kv=8,
                 decoder_start_token_id=0),
    "hf/bart": _hf("bart", kind="seq2seq", d_model=32, encoder_layers=2, decoder_layers=2,
                   encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=37, decoder_ffn_dim=37),
    "hf/marian": _hf("marian", kind="seq2seq", d_model=32, encoder_layers=2, decoder_layers=2,
                     encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=37, decoder_ffn_dim=37,
                     decoder_start_token_id=0, pad_token_id=0),
    "hf/pegasus": _hf("pegasus", kind="seq2seq", d_model=32, encoder_layers=2, decoder_layers=2,
                      encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=37, decoder_ffn_dim=37),
    # ---- transformers: vision (batch + H/W where the model interpolates) ----
    "hf/vit": _hf("vit", kind="pixel", dyn="hw", image_size=32, patch_size=8, const={"interpolate_pos_encoding": True}),
    "hf/deit": _hf("deit", kind="pixel", dyn="", image_size=32, patch_size=8),
    "hf/dinov2": _hf("dinov2", kind="pixel", dyn="hw", image_size=32, patch_size=8),
    "hf/beit": _hf("beit", kind="pixel", dyn="", image_size=32, patch_size=8, use_relative_position_bias=True),
    "hf/swin": _hf("swin", kind="pixel", dyn="hw", num_attention_heads=None, num_hidden_layers=None, image_size=32, patch_size=4, embed_dim=16, depths=[1, 1],
                   num_heads=[2, 2], window_size=4),
    "hf/convnext": _hf("convnext", kind="pixel", dyn="hw", hidden_sizes=[8, 16], depths=[1, 1], num_stages=2),
    "hf/resnet": _hf("resnet", kind="pixel", dyn="hw", embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1]),
    "hf/segformer": _hf("segformer", kind="pixel", dyn="hw", num_encoder_blocks=2, depths=[1, 1], sr_ratios=[2, 1],
                        hidden_sizes=[16, 32], num_attention_heads=[1, 2], decoder_hidden_size=32, strides=[4, 2],
                        patch_sizes=[7, 3], mlp_ratios=[2, 2]),
    "hf/mobilevit": _hf("mobilevit", kind="pixel", dyn="hw", size=64, size_b=96),
    "hf/levit": _hf("levit", kind="pixel", dyn="", hidden_size=None, num_attention_heads=None,
                    num_hidden_layers=None, intermediate_size=None, image_size=64, size=64, size_b=64),
    "hf/detr": _hf("detr", kind="pixel", dyn="hw", size=64, size_b=96, d_model=32, encoder_layers=1, decoder_layers=1,
                   encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=37, decoder_ffn_dim=37,
                   num_queries=10, use_timm_backbone=False, use_pretrained_backbone=False),
    "hf/clip": _hf("clip", kind="clip", dyn="seq", text_config={"hidden_size": 32, "num_hidden_layers": 2,
                                                                "num_attention_heads": 4, "intermediate_size": 37,
                                                                "vocab_size": 99},
                   vision_config={"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
                                  "intermediate_size": 37, "image_size": 32, "patch_size": 8}, projection_dim=16),
    # ---- transformers: audio ----
    "hf/wav2vec2": _hf("wav2vec2", kind="audio", conv_dim=[32, 32, 32], conv_kernel=[8, 8, 8], conv_stride=[4, 4, 4],
                       num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=2),
    "hf/hubert": _hf("hubert", kind="audio", conv_dim=[32, 32, 32], conv_kernel=[8, 8, 8], conv_stride=[4, 4, 4],
                     num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=2),
    "hf/whisper": _hf("whisper", kind="whisper", d_model=32, encoder_layers=2, decoder_layers=2,
                      encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=37, decoder_ffn_dim=37,
                      num_mel_bins=80, max_source_positions=16, max_target_positions=32, pad_token_id=1,
                      bos_token_id=1, eos_token_id=2, decoder_start_token_id=1),
}

HF_DEFAULTS = dict(vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37,
                   max_position_embeddings=64, use_cache=False)

# --------------------------------------------------------------------------------------------
# torchvision stand-in
# --------------------------------------------------------------------------------------------

TV_SCHEMAS = {  # the schemas of torchvision's C++ ops (csrc/ops/*.cpp)
    "nms": "(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "qnms": "(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "roi_align": "(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, SymInt pooled_width, "
                 "int sampling_ratio, bool aligned) -> Tensor",
    "_roi_align_backward": "(Tensor grad, Tensor rois, float spatial_scale, SymInt pooled_height, "
                           "SymInt pooled_width, SymInt batch_size, SymInt channels, SymInt height, SymInt width, "
                           "int sampling_ratio, bool aligned) -> Tensor",
    "qroi_align": "(Tensor input, Tensor rois, float input_scale, int input_zero_point, float rois_scale, "
                  "int rois_zero_point, float spatial_scale, SymInt pooled_height, SymInt pooled_width, "
                  "int sampling_ratio, bool aligned) -> Tensor",
    "roi_pool": "(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, SymInt pooled_width) "
                "-> (Tensor, Tensor)",
    "_roi_pool_backward": "(Tensor grad, Tensor rois, Tensor argmax, float spatial_scale, SymInt pooled_height, "
                          "SymInt pooled_width, SymInt batch_size, SymInt channels, SymInt height, SymInt width) "
                          "-> Tensor",
    "ps_roi_align": "(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, SymInt pooled_width, "
                    "int sampling_ratio) -> (Tensor, Tensor)",
    "_ps_roi_align_backward": "(Tensor grad, Tensor rois, Tensor channel_mapping, float spatial_scale, "
                              "SymInt pooled_height, SymInt pooled_width, int sampling_ratio, SymInt batch_size, "
                              "SymInt channels, SymInt height, SymInt width) -> Tensor",
    "ps_roi_pool": "(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, SymInt pooled_width) "
                   "-> (Tensor, Tensor)",
    "_ps_roi_pool_backward": "(Tensor grad, Tensor rois, Tensor channel_mapping, float spatial_scale, "
                             "SymInt pooled_height, SymInt pooled_width, SymInt batch_size, SymInt channels, "
                             "SymInt height, SymInt width) -> Tensor",
    "deform_conv2d": "(Tensor input, Tensor weight, Tensor offset, Tensor mask, Tensor bias, SymInt stride_h, "
                     "SymInt stride_w, SymInt pad_h, SymInt pad_w, SymInt dilation_h, SymInt dilation_w, "
                     "SymInt groups, SymInt offset_groups, bool use_mask) -> Tensor",
    "_deform_conv2d_backward": "(Tensor grad, Tensor input, Tensor weight, Tensor offset, Tensor mask, Tensor bias, "
                               "SymInt stride_h, SymInt stride_w, SymInt pad_h, SymInt pad_w, SymInt dilation_h, "
                               "SymInt dilation_w, SymInt groups, SymInt offset_groups, bool use_mask) "
                               "-> (Tensor, Tensor, Tensor, Tensor, Tensor)",
    "_cuda_version": "() -> int",
}


def torchvision_dir() -> Path:
    """Directory holding the unpacked ``torchvision/`` package of the 0.29.1 wheel (cached)."""
    dest = CACHE / f"torchvision-{TV_VERSION}"
    if (dest / "torchvision" / "__init__.py").is_file():
        return dest
    wheels = CACHE / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    found = sorted(wheels.glob(f"torchvision-{TV_VERSION}-*.whl"))
    if not found:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(wheels),
                        f"torchvision=={TV_VERSION}"], check=True)
        found = sorted(wheels.glob(f"torchvision-{TV_VERSION}-*.whl"))
    tmp = Path(tempfile.mkdtemp(dir=CACHE))
    with zipfile.ZipFile(found[0]) as zf:
        zf.extractall(tmp, [n for n in zf.namelist() if n.startswith("torchvision/")])
    tmp.rename(dest)
    return dest


_TV_LIB = None


def _nms_cpu(dets, scores, iou_threshold):
    """Greedy NMS like torchvision's CPU kernel: suppress boxes whose IoU with a kept one is > threshold."""
    import torch
    n = dets.size(0)
    if n == 0:
        return torch.empty(0, dtype=torch.long)
    order = scores.argsort(descending=True, stable=True)
    d = dets[order].double()
    area = (d[:, 2] - d[:, 0]) * (d[:, 3] - d[:, 1])
    lt = torch.max(d[:, None, :2], d[None, :, :2])
    rb = torch.min(d[:, None, 2:], d[None, :, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[..., 0] * wh[..., 1]
    over = (inter / (area[:, None] + area[None, :] - inter)).gt(iou_threshold)
    suppressed = torch.zeros(n, dtype=torch.bool)
    keep = []
    for i in range(n):
        if not suppressed[i]:
            keep.append(i)
            suppressed |= over[i]
    return order[torch.tensor(keep, dtype=torch.long)]


def _roi_align_cpu(input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned):
    from torchvision.ops.roi_align import _roi_align  # torchvision's own pure-PyTorch implementation
    return _roi_align(input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned)


def _not_provided(name):
    def impl(*args, **kwargs):
        raise NotImplementedError(f"torchvision::{name} has no pure-Python stand-in in bench_zoo")
    return impl


def import_torchvision():
    """Import the cached torchvision sources with pure-Python stand-ins for the compiled ops."""
    global _TV_LIB
    import torch
    tv_dir = torchvision_dir()
    if _TV_LIB is None:
        _TV_LIB = torch.library.Library("torchvision", "DEF")
        for name, schema in TV_SCHEMAS.items():
            _TV_LIB.define(name + schema)
        _TV_LIB.impl("nms", _nms_cpu, "CPU")
        _TV_LIB.impl("roi_align", _roi_align_cpu, "CPU")
        _TV_LIB.impl("_cuda_version", lambda: -1, "CompositeExplicitAutograd")
        for name in TV_SCHEMAS:
            if name not in ("nms", "roi_align", "_cuda_version"):
                _TV_LIB.impl(name, _not_provided(name), "CPU")
    sys.path.insert(0, str(tv_dir))
    pkg = str(tv_dir / "torchvision")
    real = torch.ops.load_library

    def load_library(path):
        if str(path).startswith(pkg):
            if Path(path).name.startswith("_C"):
                return None  # ops defined above; _has_ops() becomes True
            raise OSError(f"{path}: compiled torchvision extensions are not loaded by bench_zoo")
        return real(path)

    torch.ops.load_library = load_library
    try:
        import torchvision
    finally:
        torch.ops.load_library = real
    assert torchvision.__file__.startswith(pkg), torchvision.__file__
    return torchvision


def package_dirs() -> dict[str, Path]:
    """package name -> its source directory (the files the models run and exportlint lints)."""
    import importlib.util
    out = {}
    for name in ("timm", "transformers"):
        spec = importlib.util.find_spec(name)
        out[name] = Path(list(spec.submodule_search_locations)[0]).resolve()
    out["torchvision"] = (torchvision_dir() / "torchvision").resolve()
    return out


# --------------------------------------------------------------------------------------------
# Worker (runs in its own process)
# --------------------------------------------------------------------------------------------


class _Lines:
    """Maps absolute file names to package-relative ones ('timm/layers/x.py') or None."""

    def __init__(self, dirs):
        self.prefixes = [(str(d) + os.sep, d.name + "/") for d in dirs.values()]
        self.cache = {}

    def rel(self, filename):
        r = self.cache.get(filename, 0)
        if r == 0:
            r = None
            if filename:
                f = os.path.realpath(filename)
                for prefix, name in self.prefixes:
                    if f.startswith(prefix):
                        r = name + f[len(prefix):]
                        break
            self.cache[filename] = r
        return r


def _compress(lines):
    out, lines = [], sorted(lines)
    i = 0
    while i < len(lines):
        j = i
        while j + 1 < len(lines) and lines[j + 1] == lines[j] + 1:
            j += 1
        out.append(str(lines[i]) if i == j else f"{lines[i]}-{lines[j]}")
        i = j + 1
    return ",".join(out)


def _expand(text):
    out = set()
    for part in filter(None, text.split(",")):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out


def _first_line(e, limit=240):
    msg = re.sub(r"\x1b\[[0-9;]*m", "", str(e)).strip()
    first = next((ln.strip() for ln in msg.splitlines() if ln.strip()), "")
    return f"{type(e).__name__}: {first}"[:limit]


_MSG_RX = [re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)'),
           re.compile(r'File (?P<file>\S+\.py), lineno (?P<line>\d+)'),
           re.compile(r'(?P<file>/[^\s:()"]+\.py):(?P<line>\d+)')]


def _exc_lines(exc, lines: _Lines):
    """(innermost package line or None, [other package lines from messages])."""
    import traceback
    seen, todo, chain = set(), [exc], []
    while todo:
        e = todo.pop(0)
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        chain.append(e)
        todo += [e.__cause__, e.__context__]
    innermost, from_msg = None, []
    for e in chain:  # later exceptions in the chain are the causes: their frames are deeper
        frames = [(fs.filename, fs.lineno) for fs in traceback.extract_tb(e.__traceback__)]
        frames += [(fs.filename, fs.lineno) for fs in (getattr(e, "real_stack", None) or [])]
        pkg = [f"{lines.rel(f)}:{n}" for f, n in frames if lines.rel(f)]
        if pkg:
            innermost = pkg[-1]
        msg = re.sub(r"\x1b\[[0-9;]*m", "", str(e))
        for rx in _MSG_RX:
            for m in rx.finditer(msg):
                r = lines.rel(m.group("file"))
                if r:
                    from_msg.append(f"{r}:{m.group('line')}")
    if innermost is None and from_msg:
        innermost = from_msg[-1]
    return innermost, sorted(set(from_msg))


def _build(spec):
    lib = spec["lib"]
    if lib == "timm":
        import timm
        return timm.create_model(spec["arch"], pretrained=False, **spec["kw"])
    if lib == "torchvision":
        import torchvision
        kw = dict(spec["kw"])
        if spec["kind"] in ("det", "seg"):
            kw["weights_backbone"] = None
        return torchvision.models.get_model(spec["arch"], weights=None, **kw)
    import transformers
    cfg = dict(HF_DEFAULTS)
    cfg.update(spec["cfg"])
    cfg = {k: v for k, v in cfg.items() if v is not None}  # None: leave the config's default
    config = transformers.AutoConfig.for_model(spec["arch"], **cfg)
    return getattr(transformers, spec["cls"]).from_config(config)


def make_inputs(spec, config=None):
    """(A, B, dynamic_shapes, input names): positional tensors (or lists of tensors) for the wrapper."""
    import torch
    from torch.export import Dim
    g = torch.Generator().manual_seed(SEED)
    kind, dyn = spec["kind"], spec["dyn"]
    s, sb = spec["size"], spec.get("size_b") or spec["size"]
    hw = "hw" in dyn
    sb = sb if hw else s
    A = lambda *shape: torch.randn(*shape, generator=g)  # noqa: E731
    auto = Dim.AUTO
    if kind == "image" or kind == "seg":
        a, b = [A(2, 3, s, s)], [A(3, 3, sb, sb)]
        ds = [{0: auto, 2: auto, 3: auto} if hw else {0: auto}]
        return a, b, ds, ["x"]
    if kind == "video":
        t, tb = (16, 16) if not hw else (8, 12)
        a, b = [A(2, 3, t, s, s)], [A(3, 3, tb, sb, sb)]
        ds = [{0: auto, 2: auto, 3: auto, 4: auto} if hw else {0: auto}]
        return a, b, ds, ["video"]
    if kind == "det":
        a = [[A(3, s, s + 32).clamp(0, 1), A(3, s, s + 32).clamp(0, 1)]]
        b = [[A(3, s + 32, s).clamp(0, 1), A(3, s + 32, s).clamp(0, 1)]]
        ds = [[{1: auto, 2: auto}, {1: auto, 2: auto}]]
        return a, b, ds, ["images"]
    if kind == "flow":
        a, b = [A(2, 3, s, s), A(2, 3, s, s)], [A(3, 3, sb, sb), A(3, 3, sb, sb)]
        ds = [{0: auto, 2: auto, 3: auto}] * 2
        return a, b, ds, ["image1", "image2"]
    vocab = getattr(config, "vocab_size", 99) or 99
    ids = lambda b, n: torch.randint(3, min(vocab, 99), (b, n), generator=g)  # noqa: E731
    if kind == "text":
        a, b = [ids(2, 8), torch.ones(2, 8, dtype=torch.long)], [ids(3, 13), torch.ones(3, 13, dtype=torch.long)]
        return a, b, [{0: auto, 1: auto}] * 2, ["input_ids", "attention_mask"]
    if kind == "seq2seq":
        a = [ids(2, 8), torch.ones(2, 8, dtype=torch.long), ids(2, 5)]
        b = [ids(3, 13), torch.ones(3, 13, dtype=torch.long), ids(3, 7)]
        return a, b, [{0: auto, 1: auto}] * 3, ["input_ids", "attention_mask", "decoder_input_ids"]
    if kind == "pixel":
        a, b = [A(2, 3, s, s)], [A(3, 3, sb, sb)]
        return a, b, [{0: auto, 2: auto, 3: auto} if hw else {0: auto}], ["pixel_values"]
    if kind == "clip":
        a = [ids(2, 8), A(2, 3, s, s)]
        b = [ids(3, 13), A(3, 3, s, s)]
        return a, b, [{0: auto, 1: auto}, {0: auto}], ["input_ids", "pixel_values"]
    if kind == "audio":
        a, b = [A(2, 1600)], [A(3, 2400)]
        return a, b, [{0: auto, 1: auto}], ["input_values"]
    if kind == "whisper":
        n = 2 * config.max_source_positions
        a = [A(2, config.num_mel_bins, n), ids(2, 4)]
        b = [A(3, config.num_mel_bins, n), ids(3, 6)]
        return a, b, [{0: auto}, {0: auto, 1: auto}], ["input_features", "decoder_input_ids"]
    raise ValueError(kind)


def _wrapper(model, names, const):
    """nn.Module taking the inputs positionally (keyword names for transformers) and returning a flat
    tuple of output tensors, so that every exporter and the comparisons see the same interface."""
    import torch

    class Zoo(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, *args):
            if names[0] in ("x", "images", "video", "image1"):
                out = self.model(*args)
            else:
                out = self.model(**dict(zip(names, args)), **const)
            return tuple(t for t in torch.utils._pytree.tree_leaves(out) if isinstance(t, torch.Tensor))

    return Zoo().eval()


def _compare(got, want):
    """'match' or a short description of the first difference."""
    import torch
    got = tuple(got) if isinstance(got, (tuple, list)) else (got,)
    if len(got) != len(want):
        return f"{len(got)} outputs vs {len(want)}"
    for i, (x, y) in enumerate(zip(got, want)):
        if not isinstance(x, torch.Tensor):
            return f"output {i} is {type(x).__name__}"
        if tuple(x.shape) != tuple(y.shape):
            return f"output {i} shape {tuple(x.shape)} vs {tuple(y.shape)}"
        if y.numel() == 0:
            continue
        if not (y.is_floating_point() or y.is_complex()):
            if not torch.equal(x, y):
                return f"output {i} values differ"
            continue
        x, y = x.double(), y.double()
        both_nan = torch.isnan(x) & torch.isnan(y)
        d = torch.where(both_nan, 0.0, (x - y).abs())
        scale = torch.where(torch.isnan(y), 0.0, y.abs()).max().item()
        if not (d.max().item() <= 1e-4 + 1e-3 * scale):
            return f"output {i} max |diff| {d.max().item():.3g} (scale {scale:.3g})"
    return "match"


class _GuardLog:
    """Handler on the symbolic-shapes logger: every guard added, with its innermost package line."""

    def __init__(self, lines: _Lines):
        import logging
        self.lines, self.active, self.guards, self.env = lines, False, [], None
        outer = self

        class H(logging.Handler):
            def emit(self, record):
                if outer.active:
                    outer.record()

        self.logger = logging.getLogger("torch.fx.experimental.symbolic_shapes")
        self.logger.setLevel(logging.INFO)
        self.logger.addHandler(H(level=logging.INFO))
        self.logger.propagate = False
        for h in list(self.logger.handlers):  # torch's own stderr handler
            if not isinstance(h, H):
                self.logger.removeHandler(h)

    def record(self):
        f = sys._getframe(2)
        guard = None
        while f is not None:
            if f.f_code.co_name == "_log_guard" and guard is None:
                prefix = str(f.f_locals.get("prefix", ""))
                if "suppressed" in prefix:
                    return
                guard = f.f_locals.get("g")
                self.env = f.f_locals.get("self")
            elif guard is not None:
                r = self.lines.rel(f.f_code.co_filename)
                if r:
                    self.guards.append((guard, f"{r}:{f.f_lineno}"))
                    return
            f = f.f_back
        if guard is not None:
            self.guards.append((guard, None))


def _source_sizes(inputs):
    """{source name used by export's fakify ("L['args'][0][1].size()[2]"): size} for the inputs."""
    import torch
    out = {}
    leaves, _ = torch.utils._pytree.tree_flatten_with_path(list(inputs))
    for path, t in leaves:
        if isinstance(t, torch.Tensor):
            key = "".join(f"[{p.idx}]" for p in path)
            for d, n in enumerate(t.shape):
                out[f"L['args']{key}.size()[{d}]"] = int(n)
    return out


def _violated_guards(glog: _GuardLog, b_inputs, declared_sources):
    """Package lines of guards (added during export) that input B violates."""
    import sympy
    env = glog.env
    if env is None:
        return [], []
    sizes = _source_sizes(b_inputs)
    sym_b = {}
    for src, var in env.source_to_var.items():
        name = src if isinstance(src, str) else src.name() if hasattr(src, "name") else str(src)
        if name in sizes and name in declared_sources:
            sym_b[var] = sizes[name]
    violated, unattributed = {}, []
    for guard, where in glog.guards:
        fs = guard.free_symbols
        if not fs or not fs <= set(sym_b):
            continue
        try:
            val = guard.xreplace({s: sympy.Integer(sym_b[s]) for s in fs})
            val = bool(val) if val in (sympy.true, sympy.false) or isinstance(val, bool) else None
        except Exception:
            val = None
        if val is False:
            if where:
                violated.setdefault(where, str(guard)[:160])
            else:
                unattributed.append(str(guard)[:160])
    return [{"line": k, "guard": v} for k, v in violated.items()], unattributed[:5]


def run_model(name: str) -> dict:
    """Everything the benchmark measures for one model (call in a fresh process)."""
    import warnings
    t_start = time.time()
    spec = MODELS[name]
    res = {"lib": spec["lib"], "status": "ok"}
    import torch
    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    import_torchvision()
    dirs = package_dirs()
    res["t_import"] = round(time.time() - t_start, 1)
    lines = _Lines(dirs)
    warnings.simplefilter("ignore")
    try:
        model = _build(spec).eval()
        A, B, ds, names = make_inputs(spec, getattr(model, "config", None))
        wrapped = _wrapper(model, names, spec.get("const", {}))
    except Exception as e:
        res.update(status="build_failed", error=_first_line(e))
        return res
    res["params_m"] = round(sum(p.numel() for p in model.parameters()) / 1e6, 2)
    shapes = lambda xs: torch.utils._pytree.tree_map(lambda t: list(t.shape), xs)  # noqa: E731
    res["inputs"] = {"A": shapes(A), "B": shapes(B), "dynamic": ds.__repr__().replace("<_DimHint.AUTO: 3>", "AUTO")}

    # 1. eager, with coverage of package lines on A
    cov: dict[str, set] = {}

    def tracer(frame, event, arg):
        r = lines.rel(frame.f_code.co_filename)
        if r is None:
            return None
        hit = cov.setdefault(r, set())
        hit.add(frame.f_lineno)

        def local(frame, event, arg):
            if event == "line":
                hit.add(frame.f_lineno)
            return local
        return local

    try:
        with torch.no_grad():
            sys.settrace(tracer)
            try:
                eager_a = wrapped(*A)
            finally:
                sys.settrace(None)
            eager_a = wrapped(*A)  # untraced re-run: the reference (same values)
    except Exception as e:
        res.update(status="eager_failed", error=_first_line(e), line=_exc_lines(e, lines)[0])
        return res
    res["coverage"] = {k: _compress(v) for k, v in sorted(cov.items())}
    try:
        with torch.no_grad():
            eager_b = wrapped(*B)
        res["eager_b"] = "ok"
    except Exception as e:
        eager_b = None
        res["eager_b"] = _first_line(e)
        if spec["dyn"]:  # the model does not take another H/W / length: keep only the batch dynamic
            A2, B, ds, _ = make_inputs(dict(spec, dyn=""), getattr(model, "config", None))
            try:
                with torch.no_grad():
                    eager_b = wrapped(*B)
                res["eager_b"] = "ok (batch only: " + res["eager_b"][:150] + ")"
                res["inputs"] = {"A": shapes(A), "B": shapes(B),
                                 "dynamic": ds.__repr__().replace("<_DimHint.AUTO: 3>", "AUTO")}
            except Exception as e2:
                res["eager_b"] += " / batch only: " + _first_line(e2)
    res["t_eager"] = round(time.time() - t_start, 1)

    # 2. torch.export with Dim.AUTO
    glog = _GuardLog(lines)
    ex = res["export"] = {}
    t0 = time.time()
    glog.active = True
    try:
        with torch.no_grad():
            ep = torch.export.export(wrapped, tuple(A), dynamic_shapes=(tuple(ds),))
        ex["status"] = "ok"
    except Exception as e:
        ep = None
        line, from_msg = _exc_lines(e, lines)
        ex.update(status="failed", error=_first_line(e), line=line)
        if from_msg and from_msg != [line]:
            ex["msg_lines"] = from_msg[:8]
    finally:
        glog.active = False
    ex["seconds"] = round(time.time() - t0, 1)
    if ep is not None:
        declared = set()
        flat_ds = torch.utils._pytree.tree_flatten_with_path(list(ds), is_leaf=lambda x: isinstance(x, dict))[0]
        for path, dd in flat_ds:
            key = "".join(f"[{p.idx}]" for p in path)
            for d in dd:
                declared.add(f"L['args']{key}.size()[{d}]")
        # which declared dims stayed symbolic (placeholder shapes of the user inputs)
        user_ph = [n for n in ep.graph.nodes if n.op == "placeholder"
                   and n.name in set(ep.graph_signature.user_inputs)]
        static = []
        for (path, dd), node in zip(flat_ds, user_ph):
            shape = node.meta["val"].shape
            for d in dd:
                if not isinstance(shape[d], torch.SymInt):
                    static.append(f"{node.name}.{d}")
        ex["specialised_dims"] = static
        if eager_b is not None:
            try:
                with torch.no_grad():
                    got = ep.module()(*B)
                ex["b"] = _compare(got, eager_b)
                if ex["b"] != "match":
                    ex["b"], ex["b_detail"] = "mismatch", ex["b"]
            except Exception as e:
                ex["b"], ex["b_error"] = "rejects", _first_line(e)
        else:
            ex["b"] = "n/a"
        viol, unattr = _violated_guards(glog, B, declared)
        if viol:
            ex["violated"] = viol
        if unattr:
            ex["violated_unattributed"] = unattr
    del ep
    glog.guards.clear()

    # 3. jit.trace, TracerWarnings, second input
    tr = res["trace"] = {}
    t0 = time.time()
    traced = None
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        try:
            with torch.no_grad():
                traced = torch.jit.trace(wrapped, tuple(A), check_trace=False, strict=False)
            tr["status"] = "ok"
        except Exception as e:
            line, _ = _exc_lines(e, lines)
            tr.update(status="failed", error=_first_line(e), line=line)
    warn, other = {}, 0
    for w in ws:
        if issubclass(w.category, torch.jit.TracerWarning):
            r = lines.rel(w.filename)
            if r:
                warn.setdefault(f"{r}:{w.lineno}", str(w.message).split("\n")[0][:160])
            else:
                other += 1
    tr["warnings"] = [{"line": k, "msg": v} for k, v in warn.items()]
    if other:
        tr["warnings_outside_packages"] = other
    if traced is not None:
        try:
            with torch.no_grad():
                got_a = traced(*A)
            tr["a"] = _compare(got_a, eager_a)
        except Exception as e:
            tr["a"] = _first_line(e)
        if eager_b is not None:
            try:
                with torch.no_grad():
                    got = traced(*B)
                d = _compare(got, eager_b)
                tr["b"] = "match" if d == "match" else "diverges"
                if d != "match":
                    tr["b_detail"] = d
            except Exception as e:
                tr["b"], tr["b_error"] = "fails", _first_line(e)
                tr["b_line"] = _exc_lines(e, lines)[0]
        else:
            tr["b"] = "n/a"
    tr["seconds"] = round(time.time() - t0, 1)
    res["seconds"] = round(time.time() - t_start, 1)
    return res


def _worker_main(name, out_path, mem_gb):
    import resource
    if mem_gb:
        lim = int(mem_gb * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
    os.environ.setdefault("TORCHVISION_WARN_WHEN_EXTENSION_LOADING_FAILS", "")
    try:
        res = run_model(name)
    except MemoryError:
        res = {"lib": MODELS[name]["lib"], "status": "crashed", "error": "MemoryError"}
    Path(out_path).write_text(json.dumps(res))


# --------------------------------------------------------------------------------------------
# collect
# --------------------------------------------------------------------------------------------


def load_ground_truth() -> dict:
    if GROUND_TRUTH.is_file():
        return json.loads(GROUND_TRUTH.read_text())
    return {"models": {}}


def save_ground_truth(gt):
    ZOO.mkdir(parents=True, exist_ok=True)
    gt["models"] = dict(sorted(gt["models"].items()))
    text = json.dumps(gt, indent=0, separators=(",", ":"), sort_keys=False)
    GROUND_TRUTH.write_text(text + "\n")


def _summary(name, r):
    if r["status"] != "ok":
        return f"{r['status']}: {r.get('error', '')[:100]}"
    ex, tr = r.get("export", {}), r.get("trace", {})
    e = ex.get("status")
    if e == "ok":
        e = f"ok(B {ex.get('b')}{', spec ' + ','.join(ex['specialised_dims']) if ex.get('specialised_dims') else ''}" \
            f"{', viol ' + str(len(ex['violated'])) if ex.get('violated') else ''})"
    else:
        e = f"FAIL {ex.get('line')} {ex.get('error', '')[:60]}"
    t = tr.get("status")
    t = f"ok(B {tr.get('b')}, {len(tr.get('warnings', []))} warn)" if t == "ok" else f"FAIL {tr.get('line')}"
    return f"export {e} | trace {t} | {r.get('seconds')}s"


def collect(only=None, jobs=1, refresh=False, timeout=300, mem_gb=8.0):
    gt = load_ground_truth()
    gt.setdefault("models", {})
    names = list(MODELS)
    if only:
        names = [n for n in names if any(o == n or o in n for o in only)]
    todo = [n for n in names if refresh or n not in gt["models"]]
    print(f"collect: {len(names)} models selected, {len(names) - len(todo)} cached, {len(todo)} to run "
          f"(jobs={jobs}, timeout={timeout}s, memory {mem_gb} GiB); {STANDIN_NOTE}", flush=True)
    torchvision_dir()
    t0 = time.time()
    tmpdir = Path(tempfile.mkdtemp(prefix="bench_zoo_"))
    done = [0]

    def one(name):
        out = tmpdir / (name.replace("/", "__") + ".json")
        log = tmpdir / (name.replace("/", "__") + ".log")
        t = time.time()
        with open(log, "w") as lf:
            try:
                p = subprocess.run([sys.executable, str(Path(__file__).resolve()), "_worker", name, str(out),
                                    str(mem_gb)], stdout=lf, stderr=subprocess.STDOUT, timeout=timeout,
                                   cwd=str(tmpdir))
                if out.is_file():
                    r = json.loads(out.read_text())
                else:
                    tail = log.read_text().strip().splitlines()[-1:] or [""]
                    r = {"lib": MODELS[name]["lib"], "status": "crashed",
                         "error": f"exit {p.returncode}: {tail[0][:200]}"}
            except subprocess.TimeoutExpired:
                r = {"lib": MODELS[name]["lib"], "status": "timeout", "error": f"> {timeout}s"}
        r.setdefault("seconds", round(time.time() - t, 1))
        return name, r

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for name, r in pool.map(one, todo):
            gt["models"][name] = r
            done[0] += 1
            print(f"[{done[0]}/{len(todo)}] {name}: {_summary(name, r)}", flush=True)
            save_ground_truth(gt)
    gt["meta"] = env_meta()
    save_ground_truth(gt)
    print(f"collect: {time.time() - t0:.0f}s", flush=True)
    return time.time() - t0


def env_meta():
    from importlib.metadata import version
    return {"torch": version("torch"), "timm": version("timm"), "transformers": version("transformers"),
            "torchvision": TV_VERSION + " (stand-in ops)", "seed": SEED}


# --------------------------------------------------------------------------------------------
# score
# --------------------------------------------------------------------------------------------


def lint_paths(dirs, models):
    """What ``score`` lints: timm and torchvision whole; transformers without the ``models/<type>/``
    directories that no model of the zoo ran (2,500 files of other architectures would triple the
    lint time and cannot hold a ground-truth line or a false alarm)."""
    used = {p.split("/")[2] for r in models.values() for p in r.get("coverage", {})
            if p.startswith("transformers/models/") and p.count("/") >= 3}
    tf = dirs["transformers"]
    paths = [dirs["timm"], dirs["torchvision"]]
    for child in sorted(tf.iterdir()):
        if child.name == "models":
            paths += sorted(p for p in child.iterdir() if p.suffix == ".py" or p.name in used)
        elif child.suffix == ".py" or (child.is_dir() and child.name != "__pycache__"):
            paths.append(child)
    return paths


def lint(target, dirs, paths):
    cmd = ["exportlint", "--format", "json", "--no-cache", "--exit-zero", "--target", target,
           *[str(d) for d in paths]]
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        out = f.name
    p = subprocess.run(cmd + ["--output-file", out], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"exportlint failed ({p.returncode}): {p.stderr[-2000:]}")
    findings = json.loads(Path(out).read_text())
    os.unlink(out)
    lines = _Lines(dirs)
    by_file: dict[str, list] = {}
    for f in findings:
        r = lines.rel(os.path.abspath(f["path"]))
        if r:
            by_file.setdefault(r, []).append(f)
    return by_file, len(findings)


_TREES: dict = {}


def _tree(dirs, path: str):
    """The package file's Python syntax tree, parsed once per scoring run (None if unreadable)."""
    if path not in _TREES:
        import ast

        pkg, _, rest = path.partition("/")
        try:
            _TREES[path] = ast.parse((dirs[pkg] / rest).read_text())
        except (OSError, KeyError, SyntaxError, ValueError):
            _TREES[path] = None
    return _TREES[path]


def _statements_at(dirs, path: str, line: int) -> list:
    import ast

    tree = _tree(dirs, path)
    return [n for n in ast.walk(tree) if isinstance(n, ast.stmt) and n.lineno == line] if tree is not None else []


def _statement_span(dirs, path: str, line: int) -> tuple[int, int]:
    """The lines of the statement that starts at ``line`` (Python reports an error or warning at the
    first line of a multi-line statement): a simple statement whole, a compound one its header."""
    import ast

    end = line
    for node in _statements_at(dirs, path, line):
        head = getattr(node, "test", None) or getattr(node, "iter", None)
        last = head.end_lineno if head is not None else node.end_lineno
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.With, ast.Try)):
            last = node.lineno
        end = max(end, last or line)
    return line, end


def _is_guard_line(dirs, where: str) -> bool:
    """Is the statement at ``where`` an `assert`, or an `if` whose body only raises, warns or logs?"""
    import ast

    path, _, line = where.rpartition(":")
    for node in _statements_at(dirs, path, int(line)):
        if isinstance(node, ast.Assert):
            return True
        if isinstance(node, ast.If) and not node.orelse:
            return all(
                isinstance(s, (ast.Raise, ast.Pass))
                or (isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)
                    and getattr(s.value.func, "attr", getattr(s.value.func, "id", "")) in ("warn", "warning", "warning_once", "info", "debug", "print"))
                for s in node.body
            )
    return False


def _covering(index, where, dirs=None):
    """Findings on a ground-truth line: their span overlaps the statement that starts there."""
    path, _, line = where.rpartition(":")
    line = int(line)
    lo, hi = _statement_span(dirs, path, line) if dirs is not None else (line, line)
    return [f for f in index.get(path, []) if f["line"] <= hi and lo <= (f.get("end_line") or f["line"])]


_SRC_CACHE: dict = {}


def code_at(dirs, where):
    path, _, line = where.rpartition(":")
    pkg, _, rest = path.partition("/")
    if path not in _SRC_CACHE:
        try:
            _SRC_CACHE[path] = (dirs[pkg] / rest).read_text().splitlines()
        except (OSError, KeyError):
            _SRC_CACHE[path] = []
    src = _SRC_CACHE[path]
    n = int(line)
    return src[n - 1].strip() if 0 < n <= len(src) else ""


def score():
    t0 = time.time()
    gt = load_ground_truth()
    models = {k: v for k, v in gt["models"].items() if k in MODELS}  # entries of models since removed: ignored
    dirs = package_dirs()
    timings = {}
    paths = lint_paths(dirs, models)
    t = time.time()
    idx_export, n_export = lint("export", dirs, paths)
    timings["lint export"] = time.time() - t
    t = time.time()
    idx_trace, n_trace = lint("trace", dirs, paths)
    timings["lint trace"] = time.time() - t

    built = {n: r for n, r in models.items() if r["status"] == "ok"}
    # ground-truth lines: line -> [(model, error)]
    fail_lines, spec_lines, warn_lines, trace_fail_lines = {}, {}, {}, {}
    for n, r in built.items():
        ex, tr = r.get("export", {}), r.get("trace", {})
        if ex.get("status") == "failed" and ex.get("line"):
            fail_lines.setdefault(ex["line"], []).append((n, ex["error"]))
        for v in ex.get("violated", []):
            spec_lines.setdefault(v["line"], []).append((n, f"guard {v['guard']} (B {ex.get('b')})"))
        if tr.get("status") == "failed" and tr.get("line"):
            trace_fail_lines.setdefault(tr["line"], []).append((n, tr["error"]))
        if tr.get("status") == "ok" and tr.get("b") in ("diverges", "fails"):
            for w in tr.get("warnings", []):
                warn_lines.setdefault(w["line"], []).append((n, w["msg"]))
    gt_lines = set(fail_lines) | set(spec_lines) | set(warn_lines) | set(trace_fail_lines)
    all_warn = {w["line"] for r in built.values() for w in r.get("trace", {}).get("warnings", [])}

    def recall(lines_, index):
        hit = {k: v for k, v in lines_.items() if _covering(index, k, dirs)}
        miss = {k: v for k, v in lines_.items() if k not in hit}
        return hit, miss

    ex_hit, ex_miss = recall(fail_lines, idx_export)
    sp_hit, sp_miss = recall(spec_lines, idx_export)
    tw_hit, tw_miss = recall(warn_lines, idx_trace)
    # Validation guards (`assert` on sizes, `if …: raise`) warn while tracing but never change the
    # traced graph (jit.trace drops them): by definition not findings, so also counted without them.
    tw_guard = {k for k in warn_lines if _is_guard_line(dirs, k)}
    twg_hit = {k: v for k, v in tw_hit.items() if k not in tw_guard}
    twg_miss = {k: v for k, v in tw_miss.items() if k not in tw_guard}
    tf_hit, tf_miss = recall(trace_fail_lines, idx_trace)

    # false alarms
    def clean_cov(pred):
        cov = {}
        users = {}
        for n, r in built.items():
            if pred(r):
                for path, text in r.get("coverage", {}).items():
                    for ln in _expand(text):
                        cov.setdefault(path, set()).add(ln)
                        users.setdefault((path, ln), []).append(n)
        return cov, users

    def good_export(r):
        ex = r.get("export", {})
        return ex.get("status") == "ok" and not ex.get("specialised_dims") and not ex.get("violated") \
            and ex.get("b") == "match"

    def good_trace(r):
        tr = r.get("trace", {})
        return tr.get("status") == "ok" and tr.get("b") == "match" and tr.get("a", "match") == "match"

    def false_alarms(index, pred):
        cov, users = clean_cov(pred)
        out = []
        for path, fs in index.items():
            lines_run = cov.get(path)
            if not lines_run:
                continue
            for f in fs:
                if f.get("severity") != "error":
                    continue
                span = range(f["line"], (f.get("end_line") or f["line"]) + 1)
                run = [ln for ln in span if ln in lines_run]
                if run:
                    where = f"{path}:{f['line']}"
                    ms = sorted({m for ln in run for m in users[(path, ln)]})
                    out.append({"line": where, "code": f["code"], "message": f["message"][:200], "models": ms,
                                "gt_elsewhere": any(f"{path}:{ln}" in gt_lines for ln in span),
                                "tracer_warning_here": any(f"{path}:{ln}" in all_warn for ln in span)})
        return out, sum(len(v) for v in cov.values())

    fa_export, cov_export = false_alarms(idx_export, good_export)
    fa_trace, cov_trace = false_alarms(idx_trace, good_trace)

    n = lambda pred: sum(1 for r in built.values() if pred(r))  # noqa: E731
    counts = {
        "models": len(models),
        "built": len(built),
        "not_built": {k: f"{v['status']}: {v.get('error', '')}"[:160] for k, v in models.items() if v["status"] != "ok"},
        "export_ok": n(lambda r: r.get("export", {}).get("status") == "ok"),
        "export_failed": n(lambda r: r.get("export", {}).get("status") == "failed"),
        "export_ok_dynamic_and_match": n(good_export),
        "export_specialised": n(lambda r: bool(r.get("export", {}).get("specialised_dims"))),
        "export_b_rejected": n(lambda r: r.get("export", {}).get("b") == "rejects"),
        "export_b_mismatch": n(lambda r: r.get("export", {}).get("b") == "mismatch"),
        "trace_ok": n(lambda r: r.get("trace", {}).get("status") == "ok"),
        "trace_failed": n(lambda r: r.get("trace", {}).get("status") == "failed"),
        "trace_b_match": n(good_trace),
        "trace_b_diverges": n(lambda r: r.get("trace", {}).get("b") == "diverges"),
        "trace_b_fails": n(lambda r: r.get("trace", {}).get("b") == "fails"),
        "findings_export": n_export,
        "findings_trace": n_trace,
    }
    pct = lambda h, m: f"{len(h)}/{len(h) + len(m)}" + (f" ({100 * len(h) / (len(h) + len(m)):.0f}%)" if h or m else "")  # noqa: E731
    fa_ex_new = [f for f in fa_export if not f["gt_elsewhere"]]
    fa_tr_new = [f for f in fa_trace if not f["gt_elsewhere"]]
    table = [
        "| measure | value |",
        "|---|---|",
        f"| models declared / built | {counts['models']} / {counts['built']} |",
        f"| torch.export: ok / failed | {counts['export_ok']} / {counts['export_failed']} |",
        f"| torch.export ok, dims kept dynamic, B matches eager | {counts['export_ok_dynamic_and_match']} |",
        f"| torch.export ok with a specialised/narrowed dim (B rejected / mismatch) | "
        f"{counts['export_specialised']} specialised, {counts['export_b_rejected']} reject B, "
        f"{counts['export_b_mismatch']} mismatch |",
        f"| jit.trace: ok / failed; on B: match / diverges / fails | {counts['trace_ok']} / {counts['trace_failed']}; "
        f"{counts['trace_b_match']} / {counts['trace_b_diverges']} / {counts['trace_b_fails']} |",
        f"| **export failure-line recall** (export target) | {pct(ex_hit, ex_miss)} |",
        f"| **specialising lines with a finding** (export target) | {pct(sp_hit, sp_miss)} |",
        f"| **TracerWarning-line recall**, traces diverging/failing on B (trace target) | {pct(tw_hit, tw_miss)} |",
        f"| TracerWarning-line recall without validation guards ({len(tw_guard)} `assert` / raise-only `if` lines) | {pct(twg_hit, twg_miss)} |",
        f"| jit.trace failure-line recall (trace target) | {pct(tf_hit, tf_miss)} |",
        f"| **false alarms, export target** (error findings on lines run by clean exports) | {len(fa_export)} "
        f"({len(fa_ex_new)} not a ground-truth line elsewhere); {cov_export} lines covered |",
        f"| **false alarms, trace target** (error findings on lines run by matching traces) | {len(fa_trace)} "
        f"({len(fa_tr_new)} not a ground-truth line elsewhere); {cov_trace} lines covered |",
        f"| findings in the three packages (export / trace target) | {n_export} / {n_trace} |",
    ]

    def listing(title, d, dirs_):
        out = [f"\n### {title} ({len(d)})\n"]
        for k, v in sorted(d.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            models_ = ", ".join(sorted({m for m, _ in v}))
            out.append(f"- `{k}` `{code_at(dirs_, k)[:120]}` — {models_} — {v[0][1][:160]}")
        return out

    def fa_listing(title, fas):
        out = [f"\n### {title} ({len(fas)})\n"]
        for f in sorted(fas, key=lambda f: (f["gt_elsewhere"], f["line"])):
            tag = " [ground-truth line elsewhere]" if f["gt_elsewhere"] else ""
            tag += " [TracerWarning here]" if f["tracer_warning_here"] else ""
            out.append(f"- `{f['line']}` {f['code']} `{code_at(dirs, f['line'])[:120]}` — {len(f['models'])} models "
                       f"({', '.join(f['models'][:4])}{', …' if len(f['models']) > 4 else ''}){tag} — {f['message'][:140]}")
        return out

    timings["score"] = time.time() - t0
    md = ["# exportlint model-zoo benchmark", "",
          f"Generated by `python benchmarks/bench_zoo.py score` from `benchmarks/zoo/ground_truth.json` "
          f"({env_meta()}); exportlint linted timm and torchvision whole and transformers without the "
          f"`models/<type>/` directories no zoo model ran ({len(paths)} paths). {STANDIN_NOTE}.", "", *table, ""]
    if counts["not_built"]:
        md += ["\n### Models not built / not run\n"] + [f"- {k}: {v}" for k, v in counts["not_built"].items()]
    md += listing("Missed export failure lines", ex_miss, dirs)
    md += listing("Missed specialising lines", sp_miss, dirs)
    md += listing("Missed TracerWarning lines (diverging traces)", tw_miss, dirs)
    md += listing("Missed jit.trace failure lines", tf_miss, dirs)
    md += fa_listing("False alarms, export target", fa_export)
    md += fa_listing("False alarms, trace target", fa_trace)
    md += listing("Export failure lines with a finding", ex_hit, dirs)
    md += listing("Specialising lines with a finding", sp_hit, dirs)
    md += listing("TracerWarning lines with a finding", tw_hit, dirs)
    md += ["", "Phase times: " + ", ".join(f"{k} {v:.1f}s" for k, v in timings.items())]
    text = "\n".join(md) + "\n"
    (ZOO / "results.md").write_text(text)
    scorej = {
        "counts": counts,
        "export_failure_lines": {"hit": sorted(ex_hit), "miss": sorted(ex_miss)},
        "specialising_lines": {"hit": sorted(sp_hit), "miss": sorted(sp_miss)},
        "tracer_warning_lines": {"hit": sorted(tw_hit), "miss": sorted(tw_miss), "guards": sorted(tw_guard)},
        "trace_failure_lines": {"hit": sorted(tf_hit), "miss": sorted(tf_miss)},
        "false_alarms_export": fa_export,
        "false_alarms_trace": fa_trace,
        "seconds": {k: round(v, 1) for k, v in timings.items()},
    }
    (ZOO / "score.json").write_text(json.dumps(scorej, indent=1) + "\n")
    print(text)
    return scorej


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd")
    c = sub.add_parser("collect", help="run the models (cached entries reused)")
    for p in (ap, c):
        p.add_argument("--only", nargs="+", metavar="NAME", help="models whose name contains NAME")
        p.add_argument("--jobs", type=int, default=2, help="models run at once (default 2)")
        p.add_argument("--refresh", action="store_true", help="re-run cached models")
        p.add_argument("--timeout", type=int, default=300, help="seconds per model (default 300)")
        p.add_argument("--memory", type=float, default=8.0, help="GiB address space per model (default 8)")
    sub.add_parser("score", help="lint the package sources and score against the cached ground truth")
    sub.add_parser("list", help="list the models")
    w = sub.add_parser("_worker")
    w.add_argument("name")
    w.add_argument("out")
    w.add_argument("mem", type=float)
    a = ap.parse_args(argv)
    if a.cmd == "_worker":
        return _worker_main(a.name, a.out, a.mem)
    if a.cmd == "list":
        for k, v in MODELS.items():
            print(k, v["kind"], v["dyn"] or "batch")
        return None
    t = time.time()
    if a.cmd in (None, "collect"):
        collect(a.only, a.jobs, a.refresh, a.timeout, a.memory)
    if a.cmd in (None, "score"):
        score()
    print(f"total {time.time() - t:.0f}s")
    return None


if __name__ == "__main__":
    main()
