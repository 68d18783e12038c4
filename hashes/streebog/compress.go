package streebog

//go:generate go run gen_block.go
//go:generate go run gen_asm.go
//go:generate go run gen_gfni.go
