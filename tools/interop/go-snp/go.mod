module asterism.local/interop-snp

go 1.24
