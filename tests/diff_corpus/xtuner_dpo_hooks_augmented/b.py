# DPO on a chat model, mmengine style with xtuner's hooks (written for this corpus)
from mmengine.hooks import CheckpointHook, LoggerHook, ParamSchedulerHook
from torch.optim import AdamW
from transformers import AutoModelForCausalLM, AutoTokenizer

from xtuner.engine.hooks import DatasetInfoHook, EvaluateChatHook
from xtuner.model.dpo import DPO
from xtuner.utils import PROMPT_TEMPLATE

pretrained_model_name_or_path = "internlm/internlm2-chat-1_8b-sft"
prompt_template = PROMPT_TEMPLATE.internlm2_chat
max_length = 2048
lr = 5e-7
beta = 0.1
evaluation_freq = 500
evaluation_inputs = ["What famous British actor starred in Mission Impossible?"]

tokenizer = dict(
    type=AutoTokenizer.from_pretrained,
    pretrained_model_name_or_path=pretrained_model_name_or_path,
    trust_remote_code=True,
    padding_side="right",
)
model = dict(
    type=DPO,
    use_varlen_attn=False,
    loss_type="sigmoid",
    beta=beta,
    llm=dict(type=AutoModelForCausalLM.from_pretrained, pretrained_model_name_or_path=pretrained_model_name_or_path),
)
optim_wrapper = dict(optimizer=dict(type=AdamW, lr=lr, betas=(0.9, 0.999), weight_decay=0))

custom_hooks = [dict(type=DatasetInfoHook, tokenizer=tokenizer, is_intern_repo_dataset=False)]
custom_hooks += [
    dict(
        type=EvaluateChatHook,
        tokenizer=tokenizer,
        every_n_iters=evaluation_freq,
        evaluation_inputs=evaluation_inputs,
        prompt_template=prompt_template,
    )
]
default_hooks = dict(
    logger=dict(type=LoggerHook, log_metric_by_epoch=False, interval=10),
    param_scheduler=dict(type=ParamSchedulerHook),
    checkpoint=dict(type=CheckpointHook, by_epoch=False, interval=500, max_keep_ckpts=2),
)
default_hooks = default_hooks | dict(timer=None, sampler_seed=None)
