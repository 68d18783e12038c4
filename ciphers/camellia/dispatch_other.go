//go:build !amd64 || purego

package camellia

type archSchedule struct{}

func accelerated() bool { return false }

func (s *schedule) prepareArch() {}

func cryptBlocks(s *schedule, dst, src []byte) { cryptBlocksGeneric(s, dst, src) }

func cryptMasked(s *schedule, dst, src, mask []byte) { cryptMaskedGeneric(s, dst, src, mask) }
