"""The recognizer's training side: synthesis (card designs, scenes, table videos), the
networks and their training, and deck enrollment. Nothing here is imported by the
runtime (:mod:`recognizer.reader`, :mod:`recognizer.table`): a table needs onnxruntime
and OpenCV only, and the ``train`` extra (torch, ultralytics) only for training.
"""
