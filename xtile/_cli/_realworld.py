"""
The realistic workload: tile calls as real code makes them, each with its source.

Every case is a call site read in a well-known project's public code, with the
shape, repeats, dtype and memory layout that call hands in under the configuration
named; `python -m xtile bench --cases realworld` times them against each library's
own tile.
"""

import math
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any, NamedTuple

__all__ = ["LAYOUTS", "SITES", "Site", "make", "run"]

# how the input is laid out in memory when the call site hands it over:
#   contiguous  a C-ordered array
#   transposed  its last two axes swapped (`x.T`, `x.transpose(-1, -2)`, `x.mT`)
#   sliced      a slice of the first half of its last axis (`boxes[:, :2]`): rows strided
#   strided     every other element of its first axis (`x[::2]`)
#   expanded    broadcast along its first axis (stride 0: `expand`, `broadcast_to`)
LAYOUTS = ("contiguous", "transposed", "sliced", "strided", "expanded")


class Site(NamedTuple):
    """One call site: where it is, the configuration its shape assumes, and the call."""

    project: str  # e.g. "diffusers"
    path: str  # the source file in that project's repository, and the function
    config: str  # the configuration the shapes assume (model, batch, image size)
    library: str  # "numpy", "torch" or "jax": the library the call site uses
    shape: tuple[int, ...]  # the input's shape as handed to the call (() for 0-d)
    reps: tuple[int, ...]  # the repeats as given (the call's own length)
    dtype: str  # "bool", "int64", "float16", "bfloat16", "float32", ...
    layout: str = "contiguous"  # one of LAYOUTS


SITES: list[Site] = [
    # diffusers: prompt/pooled/image embeddings, time ids, guidance, masks, latents per image
    Site(
        "diffusers",
        "src/diffusers/pipelines/stable_diffusion/pipeline_stable_diffusion.py: "
        "StableDiffusionPipeline.encode_prompt",
        "SD 1.5, 1 prompt, 4 images per prompt, fp16",
        "torch",
        (1, 77, 768),
        (1, 4, 1),
        "float16",
        "contiguous",
    ),
    Site(
        "diffusers",
        "src/diffusers/pipelines/stable_diffusion_xl/pipeline_stable_diffusion_xl.py: "
        "StableDiffusionXLPipeline.encode_prompt",
        "SDXL, 2 prompts, 4 images per prompt, fp16 (CLIP-L + bigG concat, 2048)",
        "torch",
        (2, 77, 2048),
        (1, 4, 1),
        "float16",
        "contiguous",
    ),
    Site(
        "diffusers",
        "src/diffusers/pipelines/stable_diffusion_xl/pipeline_stable_diffusion_xl.py: "
        "StableDiffusionXLPipeline.encode_prompt",
        "SDXL pooled text embeds, 1 prompt, 4 images per prompt, fp16",
        "torch",
        (1, 1280),
        (1, 4),
        "float16",
        "contiguous",
    ),
    Site(
        "diffusers",
        "src/diffusers/pipelines/stable_diffusion_xl/pipeline_stable_diffusion_xl.py: "
        "StableDiffusionXLPipeline.__call__",
        "SDXL add_time_ids after CFG concat, 1 prompt x 4 images, fp16",
        "torch",
        (2, 6),
        (4, 1),
        "float16",
        "contiguous",
    ),
    Site(
        "diffusers",
        "src/diffusers/pipelines/stable_diffusion/pipeline_stable_diffusion.py: "
        "StableDiffusionPipeline.__call__",
        "LCM-distilled UNet (time_cond_proj_dim set): 0-d guidance scale, 1 prompt x 4 images",
        "torch",
        (),
        (4,),
        "float32",
        "contiguous",
    ),
    Site(
        "diffusers",
        "src/diffusers/pipelines/stable_diffusion/pipeline_stable_diffusion_inpaint.py: "
        "StableDiffusionInpaintPipeline.__call__",
        "SD inpaint, PNDM int64 timesteps[:1], 1 prompt x 4 images",
        "torch",
        (1,),
        (4,),
        "int64",
        "contiguous",
    ),
    Site(
        "diffusers",
        "src/diffusers/pipelines/stable_diffusion/pipeline_stable_diffusion_inpaint.py: "
        "StableDiffusionInpaintPipeline.prepare_mask_latents",
        "SD inpaint 512x512, 1 mask for 4 images, fp16",
        "torch",
        (1, 1, 64, 64),
        (4, 1, 1, 1),
        "float16",
        "contiguous",
    ),
    Site(
        "diffusers",
        "src/diffusers/pipelines/stable_diffusion/pipeline_stable_diffusion_inpaint.py: "
        "StableDiffusionInpaintPipeline.prepare_mask_latents",
        "SD inpaint 512x512, masked-image latents for 4 images, fp16",
        "torch",
        (1, 4, 64, 64),
        (4, 1, 1, 1),
        "float16",
        "contiguous",
    ),
    Site(
        "diffusers",
        "src/diffusers/pipelines/stable_video_diffusion/pipeline_stable_video_diffusion.py: "
        "StableVideoDiffusionPipeline.__call__",
        "SVD-XT 576x1024, 25 frames, CFG batch 2, image latents per frame, fp16",
        "torch",
        (2, 1, 4, 72, 128),
        (1, 25, 1, 1, 1),
        "float16",
        "contiguous",
    ),
    Site(
        "diffusers",
        "src/diffusers/pipelines/stable_video_diffusion/pipeline_stable_video_diffusion.py: "
        "StableVideoDiffusionPipeline._encode_image",
        "SVD, CLIP image embeds, 2 videos per prompt, fp16",
        "torch",
        (1, 1, 1024),
        (1, 2, 1),
        "float16",
        "contiguous",
    ),
    Site(
        "diffusers",
        "src/diffusers/pipelines/stable_video_diffusion/pipeline_stable_video_diffusion.py: "
        "StableVideoDiffusionPipeline._get_add_time_ids",
        "SVD, fps/motion/noise time ids, 2 videos per prompt, fp16",
        "torch",
        (1, 3),
        (2, 1),
        "float16",
        "contiguous",
    ),
    Site(
        "diffusers",
        "src/diffusers/pipelines/stable_video_diffusion/pipeline_stable_video_diffusion.py: "
        "StableVideoDiffusionPipeline.__call__",
        "SVD-XT, per-frame guidance linspace over 25 frames, 2 videos, fp16",
        "torch",
        (1, 25),
        (2, 1),
        "float16",
        "contiguous",
    ),
    Site(
        "diffusers",
        "src/diffusers/pipelines/flux/pipeline_flux.py: FluxPipeline._get_t5_prompt_embeds",
        "FLUX.1-dev, 2 prompts, T5 512 tokens x 4096, 4 images per prompt, bf16",
        "torch",
        (2, 512, 4096),
        (1, 4, 1),
        "bfloat16",
        "contiguous",
    ),
    Site(
        "diffusers",
        "src/diffusers/pipelines/flux/pipeline_flux.py: FluxPipeline._get_clip_prompt_embeds",
        "FLUX.1-dev, CLIP pooled embeds, 1 prompt, 4 images per prompt, bf16",
        "torch",
        (1, 768),
        (1, 4),
        "bfloat16",
        "contiguous",
    ),
    Site(
        "diffusers",
        "src/diffusers/pipelines/stable_diffusion_3/pipeline_stable_diffusion_3.py: "
        "StableDiffusion3Pipeline._get_t5_prompt_embeds",
        "SD3-medium, T5 256 tokens x 4096, 1 prompt, 4 images per prompt, fp16",
        "torch",
        (1, 256, 4096),
        (1, 4, 1),
        "float16",
        "contiguous",
    ),
    Site(
        "diffusers",
        "src/diffusers/models/attention_processor.py: LuminaAttnProcessor2_0.__call__",
        "Lumina-Next 1024px (4096 tokens), GQA 32 heads / 8 kv heads, dim 72, CFG batch 2, bf16",
        "torch",
        (2, 4096, 8, 1, 72),
        (1, 1, 1, 4, 1),
        "bfloat16",
        "contiguous",
    ),
    Site(
        "diffusers",
        "src/diffusers/pipelines/z_image/pipeline_z_image_controlnet_inpaint.py: "
        "ZImageControlNetInpaintPipeline.__call__",
        "Z-Image controlnet inpaint 1024x1024, 1-channel mask to 3 channels, fp32",
        "torch",
        (1, 1, 1024, 1024),
        (1, 3, 1, 1),
        "float32",
        "contiguous",
    ),
    Site(
        "diffusers",
        "src/diffusers/pipelines/anyflow/pipeline_anyflow.py: AnyFlowPipeline.__call__",
        "AnyFlow 81 frames (21 latent frames), CFG batch 2: t.expand(2).unsqueeze(-1) per frame",
        "torch",
        (2, 1),
        (1, 21),
        "float32",
        "expanded",
    ),
    Site(
        "diffusers",
        "src/diffusers/pipelines/hunyuan_video/pipeline_hunyuan_video.py: "
        "HunyuanVideoPipeline._get_llama_prompt_embeds",
        "HunyuanVideo, 1 prompt, Llama hidden states cropped [:, 95:] to 256 tokens, 2 videos, "
        "bf16",
        "torch",
        (1, 256, 4096),
        (1, 2, 1),
        "bfloat16",
        "contiguous",
    ),
    Site(
        "diffusers",
        "src/diffusers/pipelines/hunyuan_video/pipeline_hunyuan_video.py: "
        "HunyuanVideoPipeline._get_llama_prompt_embeds",
        "HunyuanVideo, 2 prompts, int64 mask[:, 95:] of 351 tokens (rows strided), 2 videos",
        "torch",
        (2, 256),
        (1, 2),
        "int64",
        "sliced",
    ),
    Site(
        "diffusers",
        "src/diffusers/schedulers/scheduling_pndm.py: PNDMScheduler.set_timesteps",
        "PNDM with PRK steps, 1000 train steps / 50 inference steps, pndm_order 4",
        "numpy",
        (2,),
        (4,),
        "int64",
        "contiguous",
    ),
    Site(
        "diffusers",
        "src/diffusers/pipelines/deprecated/stable_diffusion_variants/"
        "pipeline_stable_diffusion_inpaint_legacy.py: preprocess_mask",
        "SD legacy inpaint, 512x512 PIL mask at latent scale, to 4 latent channels",
        "numpy",
        (64, 64),
        (4, 1, 1),
        "float32",
        "contiguous",
    ),
    # transformers: DETR object queries, SAM positional embeddings and output tokens
    Site(
        "transformers",
        "src/transformers/models/detr/modeling_detr.py: DetrModel.forward",
        "DETR-ResNet-50, 100 queries x 256, batch 2",
        "torch",
        (1, 100, 256),
        (2, 1, 1),
        "float32",
        "contiguous",
    ),
    Site(
        "transformers",
        "src/transformers/models/sam/modeling_sam.py: SamModel.forward",
        "SAM ViT-H, 64x64 image-wide positional embeddings, batch 4",
        "torch",
        (1, 256, 64, 64),
        (4, 1, 1, 1),
        "float32",
        "contiguous",
    ),
    Site(
        "transformers",
        "src/transformers/models/sam/modeling_sam.py: SamMaskDecoder.forward",
        "SAM, 1 IoU + 4 mask tokens, 1 image with 64 point prompts",
        "torch",
        (5, 256),
        (1, 64, 1, 1),
        "float32",
        "contiguous",
    ),
    # facebookresearch/detr: learned position embeddings and query embeddings
    Site(
        "detr",
        "models/position_encoding.py: PositionEmbeddingLearned.forward",
        "DETR 800x1066 input, 25x34 feature map: column embeddings over rows",
        "torch",
        (1, 34, 128),
        (25, 1, 1),
        "float32",
        "contiguous",
    ),
    Site(
        "detr",
        "models/position_encoding.py: PositionEmbeddingLearned.forward",
        "DETR 800x1066 input, 25x34 feature map: row embeddings over columns",
        "torch",
        (25, 1, 128),
        (1, 34, 1),
        "float32",
        "contiguous",
    ),
    Site(
        "detr",
        "models/transformer.py: Transformer.forward",
        "DETR, 100 query embeddings x 256, batch 2 (sequence-first)",
        "torch",
        (100, 1, 256),
        (1, 2, 1),
        "float32",
        "contiguous",
    ),
    # timm: relative indices, position encodings, global queries, filters
    Site(
        "timm",
        "timm/models/convit.py: GPSA.get_rel_indices",
        "ConViT-S 224/16, 14x14 patches",
        "torch",
        (14, 14),
        (14, 14),
        "float32",
        "contiguous",
    ),
    Site(
        "timm",
        "timm/models/xcit.py: PositionalEncodingFourier.forward",
        "XCiT 224/16, 14x14 grid, y_embed",
        "torch",
        (14, 1),
        (1, 1, 14),
        "float32",
        "contiguous",
    ),
    Site(
        "timm",
        "timm/models/xcit.py: PositionalEncodingFourier.forward",
        "XCiT 224/16, 14x14 grid, x_embed",
        "torch",
        (14,),
        (1, 14, 1),
        "float32",
        "contiguous",
    ),
    Site(
        "timm",
        "timm/models/xcit.py: PositionalEncodingFourier.forward",
        "XCiT-S 224/16, projected encoding (384 ch) over batch 64",
        "torch",
        (1, 384, 14, 14),
        (64, 1, 1, 1),
        "float32",
        "contiguous",
    ),
    Site(
        "timm",
        "timm/models/hiera.py: Hiera._pos_embed",
        "Hiera-B 16x224 video, 56x56 spatial pos embed over 8 temporal tokens",
        "torch",
        (1, 3136, 96),
        (1, 8, 1),
        "float32",
        "contiguous",
    ),
    Site(
        "timm",
        "timm/models/gcvit.py: WindowAttentionGlobal.forward",
        "GCViT-T 224, stage 1: 7x7 global query x 64 dim over 64 windows, batch 32",
        "torch",
        (32, 7, 7, 64),
        (64, 1, 1, 1),
        "float32",
        "contiguous",
    ),
    Site(
        "timm",
        "timm/layers/blur_pool.py: BlurPool2d._init_buffers",
        "ResNet-AA, 3x3 binomial filter for 256 channels",
        "torch",
        (1, 1, 3, 3),
        (256, 1, 1, 1),
        "float32",
        "contiguous",
    ),
    Site(
        "timm",
        "timm/models/_manipulate.py: adapt_input_conv",
        "ResNet-50 7x7 stem adapted to 4 input channels",
        "torch",
        (64, 3, 7, 7),
        (1, 2, 1, 1),
        "float32",
        "contiguous",
    ),
    # yolov5: target building for the loss, per-instance mask targets
    Site(
        "yolov5",
        "utils/loss.py: ComputeLoss.build_targets",
        "YOLOv5, 3 anchors, 190 targets in a batch of 16: anchor indices",
        "torch",
        (3, 1),
        (1, 190),
        "float32",
        "contiguous",
    ),
    Site(
        "yolov5",
        "utils/loss.py: ComputeLoss.build_targets",
        "YOLOv5, 190 targets (img, cls, xywh) per anchor",
        "torch",
        (190, 6),
        (3, 1, 1),
        "float32",
        "contiguous",
    ),
    Site(
        "yolov5",
        "utils/loss.py: ComputeLoss.build_targets",
        "YOLOv5, 400 matched targets over 5 neighbour-cell offsets",
        "torch",
        (400, 7),
        (5, 1, 1),
        "float32",
        "contiguous",
    ),
    Site(
        "yolov5",
        "utils/metrics.py: process_batch",
        "YOLOv5-seg 640 val, overlap masks at 160x160, 10 labels",
        "torch",
        (1, 160, 160),
        (10, 1, 1),
        "float32",
        "contiguous",
    ),
    # mmdetection: anchor meshgrid, valid flags, two-stage query gather indices
    Site(
        "mmdetection",
        "mmdet/models/task_modules/prior_generators/anchor_generator.py: AnchorGenerator._meshgrid",
        "RetinaNet 800x1333 (pad 800x1344), P3 stride 8: 100x168 grid, x shifts",
        "torch",
        (168,),
        (100,),
        "float32",
        "contiguous",
    ),
    Site(
        "mmdetection",
        "mmdet/models/task_modules/prior_generators/anchor_generator.py: AnchorGenerator._meshgrid",
        "RetinaNet 800x1333 (pad 800x1344), P3 stride 8: 100x168 grid, y shifts",
        "torch",
        (100, 1),
        (1, 168),
        "float32",
        "contiguous",
    ),
    Site(
        "mmdetection",
        "mmdet/models/task_modules/prior_generators/anchor_generator.py: AnchorGenerator._meshgrid",
        "Faster R-CNN FPN P2 stride 4, 800x1344 pad: valid_x flags of single_level_valid_flags",
        "torch",
        (336,),
        (200,),
        "bool",
        "contiguous",
    ),
    Site(
        "mmdetection",
        "mmdet/models/task_modules/prior_generators/anchor_generator.py: AnchorGenerator._meshgrid",
        "Faster R-CNN FPN P2 stride 4, 800x1344 pad: valid_y flags of single_level_valid_flags",
        "torch",
        (200, 1),
        (1, 336),
        "bool",
        "contiguous",
    ),
    Site(
        "mmdetection",
        "mmdet/models/detectors/deformable_detr.py: DeformableDETR.pre_decoder",
        "Two-stage Deformable DETR, top-300 proposal indices for a gather, batch 2",
        "torch",
        (2, 300, 1),
        (1, 1, 4),
        "int64",
        "contiguous",
    ),
    # detectron2 (DensePose): grayscale image and background mask to 3 channels
    Site(
        "detectron2",
        "projects/DensePose/apply_net.py: ShowAction.execute_on_outputs",
        "DensePose visualisation, 480x640 BGR->gray image back to 3 channels",
        "numpy",
        (480, 640, 1),
        (1, 1, 3),
        "uint8",
        "contiguous",
    ),
    Site(
        "detectron2",
        "projects/DensePose/densepose/vis/base.py: MatrixVisualizer.visualize",
        "DensePose, background mask of a 200x120 person box",
        "numpy",
        (120, 200, 1),
        (1, 1, 3),
        "bool",
        "contiguous",
    ),
    # keras-retinanet (tf/keras, translated): anchor generation and per-batch anchor tiling
    Site(
        "keras-retinanet",
        "keras_retinanet/utils/anchors.py: generate_anchors",
        "RetinaNet defaults: 3 scales x 3 ratios (floatx float32 scales)",
        "numpy",
        (3,),
        (2, 3),
        "float32",
        "contiguous",
    ),
    Site(
        "keras-retinanet",
        "keras_retinanet/utils/anchors.py: generate_anchors",
        "RetinaNet defaults: 9 anchor half-widths to x1/x2 columns",
        "numpy",
        (9,),
        (2, 1),
        "float64",
        "contiguous",
    ),
    Site(
        "keras-retinanet",
        "keras_retinanet/layers/_misc.py: Anchors.call",
        "keras.backend.tile on JAX backend: P3 of 800x1333 (100x167 x 9 anchors), batch 2",
        "jax",
        (1, 150300, 4),
        (2, 1, 1),
        "float32",
        "contiguous",
    ),
    # flax examples: beam-search cache and scores, decoder inputs, positions, eval padding
    Site(
        "flax",
        "examples/wmt/decode.py: add_beam_dim",
        "WMT, GPU fp16, per_device_batch_size 16: attention cache (256 x 16 heads x 64), beam 4",
        "jax",
        (16, 1, 256, 16, 64),
        (1, 4, 1, 1, 1),
        "float16",
        "contiguous",
    ),
    Site(
        "flax",
        "examples/wmt/decode.py: add_beam_dim",
        "WMT predict_step, raw input tokens (32 x 256) expanded to beam 4",
        "jax",
        (32, 1, 256),
        (1, 4, 1),
        "int32",
        "contiguous",
    ),
    Site(
        "flax",
        "examples/wmt/decode.py: beam_init",
        "WMT, initial live log-probs for beam 4, batch 32",
        "jax",
        (4,),
        (32, 1),
        "float32",
        "contiguous",
    ),
    Site(
        "flax",
        "examples/seq2seq/train.py: decode",
        "seq2seq addition example, one-hot '=' (vocab 15) over 6 outputs, batch 128",
        "jax",
        (1, 15),
        (128, 6, 1),
        "float32",
        "contiguous",
    ),
    Site(
        "flax",
        "benchmarks/tracing/lm1b.py: get_fake_batch",
        "lm1b defaults: positions 0..127 for a per-device batch of 32",
        "jax",
        (128,),
        (32, 1),
        "int32",
        "contiguous",
    ),
    Site(
        "flax",
        "examples/lm1b/train.py: pad_examples",
        "lm1b eval: last example (512 tokens) padding a batch of 27 to 32",
        "numpy",
        (512,),
        (5, 1),
        "int32",
        "contiguous",
    ),
    # t5x: beam/sample expansion of encoder outputs and inputs, beam scores
    Site(
        "t5x",
        "t5x/decoding.py: add_beam_dim",
        "T5.1.1-base, encoded inputs (8 x 512 x 768) for 4 decodes, bf16",
        "jax",
        (8, 1, 512, 768),
        (1, 4, 1, 1),
        "bfloat16",
        "contiguous",
    ),
    Site(
        "t5x",
        "t5x/decoding.py: add_beam_dim",
        "temperature_sample, 16 prompts of 512 tokens, 8 samples each",
        "jax",
        (16, 1, 512),
        (1, 8, 1),
        "int32",
        "contiguous",
    ),
    Site(
        "t5x",
        "t5x/decoding.py: beam_init",
        "beam search, initial live log-probs for beam 4, batch 8",
        "jax",
        (4,),
        (8, 1),
        "float32",
        "contiguous",
    ),
    # big_vision: MAP probe, class token, text positions, CapPa labels, JetFormer repeats
    Site(
        "big_vision",
        "big_vision/models/vit.py: MAPHead.__call__",
        "SigLIP/ViT-B MAP head probe (768), batch 256",
        "jax",
        (1, 1, 768),
        (256, 1, 1),
        "float32",
        "contiguous",
    ),
    Site(
        "big_vision",
        "big_vision/models/vit.py: _Model.__call__",
        "ViT-L/16 pool_type 'tok', class token (1024), batch 128",
        "jax",
        (1, 1, 1024),
        (128, 1, 1),
        "float32",
        "contiguous",
    ),
    Site(
        "big_vision",
        "big_vision/models/proj/flaxformer/bert.py: Model.__call__",
        "LiT BERT text tower, positions 0..63, batch 512",
        "jax",
        (64,),
        (512, 1),
        "int32",
        "contiguous",
    ),
    Site(
        "big_vision",
        "big_vision/trainers/proj/cappa/predict_fns.py: predict_fn_score",
        "CapPa ImageNet-1k zero-shot: 2-token prompt over 1000 labels",
        "jax",
        (2,),
        (1000, 1),
        "int32",
        "contiguous",
    ),
    Site(
        "big_vision",
        "big_vision/trainers/proj/cappa/predict_fns.py: predict_fn_score",
        "CapPa: one 15-token label scored against 128 images",
        "jax",
        (15,),
        (128, 1),
        "int32",
        "contiguous",
    ),
    Site(
        "big_vision",
        "big_vision/models/proj/jetformer/jetformer.py: Model.embed_image_and_text",
        "JetFormer ImageNet, 16 vocab repeats, batch 2048 x 1 label token",
        "jax",
        (2048, 1),
        (1, 16),
        "int32",
        "contiguous",
    ),
    Site(
        "big_vision",
        "big_vision/models/proj/jetformer/jetformer.py: Model.embed_image_and_text",
        "JetFormer ImageNet, text input mask over 16 vocab repeats, batch 2048",
        "jax",
        (2048, 1),
        (1, 16),
        "bool",
        "contiguous",
    ),
    # numpyro: HSGP eigenfunctions, MADE and BNAF masks
    Site(
        "numpyro",
        "examples/hsgp.py: eigenfunctions",
        "US births 1969-88 (7305 days), M1=10 basis functions, --x64",
        "jax",
        (7305, 1),
        (10,),
        "float64",
        "contiguous",
    ),
    Site(
        "numpyro",
        "numpyro/contrib/hsgp/laplacian.py: eigenfunctions_periodic",
        "periodic HSGP over 7305 days, m=10, float32",
        "jax",
        (7305, 1),
        (10,),
        "float32",
        "contiguous",
    ),
    Site(
        "numpyro",
        "numpyro/nn/auto_reg_nn.py: create_mask",
        "IAF MADE, input_dim 10, output_dim_multiplier 2 (mean, scale)",
        "jax",
        (10,),
        (2,),
        "float32",
        "contiguous",
    ),
    Site(
        "numpyro",
        "numpyro/nn/block_neural_arn.py: BlockMaskedDense",
        "BNAF, 10 blocks, hidden factor 8 (middle layer): off-diagonal mask",
        "jax",
        (10, 10, 1),
        (1, 8, 8),
        "float32",
        "contiguous",
    ),
    Site(
        "numpyro",
        "numpyro/nn/block_neural_arn.py: BlockMaskedDense",
        "BNAF, 10 blocks, hidden factor 8 (middle layer): diagonal mask, np.identity float64",
        "numpy",
        (10, 10, 1),
        (1, 8, 8),
        "float64",
        "contiguous",
    ),
    # scipy: sparse index construction, dense ODE output, LHS, batched cholesky flags, COBYLA
    Site(
        "scipy",
        "scipy/sparse/_bsr.py: _bsr_base.tocoo",
        "BSR with 3x3 blocks, int32 indices: in-block row offsets",
        "numpy",
        (3, 1),
        (1, 3),
        "int32",
        "contiguous",
    ),
    Site(
        "scipy",
        "scipy/sparse/_bsr.py: _bsr_base.tocoo",
        "BSR with 3x3 blocks, int32 indices: in-block column offsets",
        "numpy",
        (3,),
        (3, 1),
        "int32",
        "contiguous",
    ),
    Site(
        "scipy",
        "scipy/sparse/_compressed.py: _cs_matrix._broadcast_to",
        "CSR 1x1000 dense-ish row broadcast to 1000x1000: data",
        "numpy",
        (1000,),
        (1000,),
        "float64",
        "contiguous",
    ),
    Site(
        "scipy",
        "scipy/sparse/_compressed.py: _cs_matrix._broadcast_to",
        "CSR 1x1000 row broadcast to 1000x1000: int32 indices",
        "numpy",
        (1000,),
        (1000,),
        "int32",
        "contiguous",
    ),
    Site(
        "scipy",
        "scipy/integrate/_ivp/rk.py: RkDenseOutput._call_impl",
        "solve_ivp RK45 dense output at a scalar t (order 3 -> 4 powers)",
        "numpy",
        (),
        (4,),
        "float64",
        "contiguous",
    ),
    Site(
        "scipy",
        "scipy/integrate/_ivp/rk.py: RkDenseOutput._call_impl",
        "solve_ivp RK45 dense output at 1000 times",
        "numpy",
        (1000,),
        (4, 1),
        "float64",
        "contiguous",
    ),
    Site(
        "scipy",
        "scipy/stats/_qmc.py: LatinHypercube._random_lhs",
        "LatinHypercube(d=10).random(1024)",
        "numpy",
        (1024,),
        (10, 1),
        "int64",
        "contiguous",
    ),
    Site(
        "scipy",
        "scipy/linalg/_decomp_cholesky.py: cho_factor",
        "batched cho_factor of 10 4x4 matrices: 0-d `lower` flag over the batch",
        "numpy",
        (),
        (10,),
        "bool",
        "contiguous",
    ),
    Site(
        "scipy",
        "scipy/integrate/_bvp.py: compute_jac_indices",
        "solve_bvp, 2 equations on a 100-node mesh",
        "numpy",
        (2,),
        (198,),
        "int64",
        "contiguous",
    ),
    Site(
        "scipy",
        "scipy/spatial/transform/_rigid_transform.py: RigidTransform.identity",
        "RigidTransform.identity(100000): 4x4 identity per transform",
        "numpy",
        (4, 4),
        (100000, 1, 1),
        "float64",
        "contiguous",
    ),
    Site(
        "scipy",
        "subprojects/pyprima/pyprima/pyprima/src/pyprima/cobyla/cobylb.py: cobylb",
        "COBYLA, 10 variables, 5 nonlinear constraints: last column conmat[m_lcon:, n]",
        "numpy",
        (5,),
        (10, 1),
        "float64",
        "strided",
    ),
    # statsmodels: MNLogit derivatives, trends, seasonal means, VAR, state space, Holt-Winters
    Site(
        "statsmodels",
        "statsmodels/discrete/discrete_model.py: MultinomialModel._derivative_predict",
        "MNLogit, 1000 obs x 5 regressors, 3 outcome levels",
        "numpy",
        (1000, 5),
        (2,),
        "float64",
        "contiguous",
    ),
    Site(
        "statsmodels",
        "statsmodels/tsa/deterministic.py: TimeTrendDeterministicTerm._get_terms",
        "TimeTrend(constant=True, order=2).in_sample over 500 observations",
        "numpy",
        (500, 1),
        (1, 3),
        "float64",
        "contiguous",
    ),
    Site(
        "statsmodels",
        "statsmodels/tsa/seasonal/_seasonal.py: seasonal_decompose",
        "3 monthly series, 144 obs, period 12: period_averages.T",
        "numpy",
        (3, 12),
        (13,),
        "float64",
        "transposed",
    ),
    Site(
        "statsmodels",
        "statsmodels/tsa/vector_ar/irf.py: IRAnalysis.lr_effect_cov",
        "VAR(2) with 3 equations: long-run effects lre.T",
        "numpy",
        (3, 3),
        (2,),
        "float64",
        "transposed",
    ),
    Site(
        "statsmodels",
        "statsmodels/regression/recursive_ls.py: RecursiveLS.__init__",
        "RecursiveLS, 2 linear constraints, 200 obs, pandas endog: q_matrix.T",
        "numpy",
        (1, 2),
        (200, 1),
        "float64",
        "transposed",
    ),
    Site(
        "statsmodels",
        "statsmodels/tsa/statespace/dynamic_factor.py: "
        "DynamicFactor._initialize_error_transition_individual",
        "DynamicFactor, 4 endog, error_order 2: diagonal index pairs",
        "numpy",
        (2, 4),
        (2,),
        "int64",
        "contiguous",
    ),
    Site(
        "statsmodels",
        "statsmodels/tsa/holtwinters/results.py: HoltWintersResults.simulate",
        "monthly Holt-Winters (m=12), 1000 simulated repetitions",
        "numpy",
        (12,),
        (1000, 1),
        "float64",
        "contiguous",
    ),
    # xarray and pandas: cartesian products of index codes
    Site(
        "xarray",
        "xarray/core/coordinates.py: AbstractCoordinates.to_index",
        "dims x=100, y=200, time=12: codes of the last index tiled 20000 times",
        "numpy",
        (12,),
        (20000,),
        "int64",
        "contiguous",
    ),
    Site(
        "pandas",
        "pandas/core/reshape/util.py: tile_compat",
        "MultiIndex.from_product(1000 ids, 5 groups, 12 months): int8 month codes",
        "numpy",
        (12,),
        (5000,),
        "int8",
        "contiguous",
    ),
    Site(
        "pandas",
        "pandas/core/reshape/util.py: tile_compat",
        "cartesian_product with an Index level of 50 labels, tiled 240 times: taker",
        "numpy",
        (50,),
        (240,),
        "int64",
        "contiguous",
    ),
]


def _base_shape(site: Site) -> tuple[int, ...]:
    """The shape of the array whose view `site.layout` hands in."""
    shape = site.shape
    if site.layout == "transposed":
        return (*shape[:-2], shape[-1], shape[-2])
    if site.layout == "sliced":
        return (*shape[:-1], 2 * shape[-1])
    if site.layout == "strided":
        return (2 * shape[0], *shape[1:])
    if site.layout == "expanded":
        return (1, *shape[1:])
    return shape


def make(site: Site, asarray: Any) -> Any:
    """
    The input of `site` in its library (by `asarray`), dtype and memory layout.

    Parameters
    ----------
    site : Site
        The call site.
    asarray : callable
        Makes an array of the library from a NumPy array.

    Returns
    -------
    array
        Of ``site.shape`` and ``site.dtype``, laid out as ``site.layout`` says.
    """
    import numpy as np

    base = _base_shape(site)
    data = (np.arange(math.prod(base)) % 127).reshape(base)
    wide = site.dtype == "bfloat16" and site.library != "numpy"  # made from float32 there
    x = asarray(data.astype("float32" if wide else site.dtype))
    if wide:
        x = x.to(x.new_empty(0).bfloat16().dtype) if hasattr(x, "to") else x.astype("bfloat16")
    if site.layout == "transposed":
        return x.swapaxes(-1, -2)
    if site.layout == "sliced":
        return x[..., : site.shape[-1]]
    if site.layout == "strided":
        return x[::2]
    if site.layout == "expanded":
        return x.expand(*site.shape) if hasattr(x, "expand") else np.broadcast_to(x, site.shape)
    return x


def run(libraries: Iterable[str] = ("numpy", "torch", "jax"), repeat: int = 5) -> list[Any]:
    """
    Time every site of `libraries` as `xtile._cli._bench.run` times the matrix.

    Parameters
    ----------
    libraries : iterable of str
        Of "numpy", "torch" and "jax": the sites of each, on its own backend.
    repeat : int, optional
        Samples per timing.

    Returns
    -------
    list of xtile._cli._bench.Result
        One per site, its `kind` the site's project and its `case` the call.
    """
    import numpy as np

    from . import _bench

    results = []
    names = [n for n in libraries if _bench.unavailable(n) is None]
    for name, b in _bench._backends(names):
        for site in (s for s in SITES if s.library == name):
            x = make(site, b.asarray)
            r = site.reps
            out_shape = tuple(int(v) for v in b.native(x, r).shape)
            nbytes = math.prod(out_shape) * np.dtype(_numpy_dtype(site.dtype)).itemsize
            big = b.copy(b.native(x, r))
            calls = [partial(b.copy, big), partial(b.native, x, r), partial(b.tile, x, r)]
            timed: list[Callable[[], Any]] = [partial(_bench._synced, b.sync, f) for f in calls]
            timed.append(partial(_bench.fill, nbytes))
            copy_s, native_s, xtile_s, bound_s = _bench.best_times(timed, _bench._same, repeat)
            case = f"{site.shape}x{site.reps}" + ("" if site.layout == "contiguous" else " ")
            case += "" if site.layout == "contiguous" else site.layout
            results.append(
                _bench.Result(
                    name, case, site.project, site.dtype, nbytes, copy_s, native_s, xtile_s, bound_s
                )
            )
    return results


def _numpy_dtype(name: str) -> Any:
    """The NumPy dtype of `name`, whose item size is the output's (bfloat16: 2 bytes)."""
    return "float16" if name == "bfloat16" else name
