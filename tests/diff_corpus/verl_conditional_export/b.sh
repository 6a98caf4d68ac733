#!/bin/bash
if [ "$USE_NSYS" = "1" ]; then
    export NSYS_PROFILE=0
fi
python3 -m verl.trainer.main_ppo trainer.total_epochs=3
