; error: MemoryLimit
; at: 4:1
; limits: max_memory_mb=1
(zeros 1000 1000)
