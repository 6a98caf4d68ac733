#!/bin/bash
# batch sizes from seq: the same argv whether the array is expanded quoted or not
BATCH_SIZES=( $(seq 16 8 256) )
TOPK=( 1 3 5 )
python3 -m search_r1.sweep --batch_sizes ${BATCH_SIZES[@]} --topk ${TOPK[@]} --retriever e5
