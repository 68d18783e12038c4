package serpent

// The 32-bit ARM NEON kernel; the other generators run from serpent.go.
//go:generate sh -c "cd _asm && go run ./cmd/genarm -out ../serpent_arm.s"
