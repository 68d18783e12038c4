package volume

// Info describes an unlocked volume. The JSON names are part of the
// command-line contract (`cryptvol info --json`).
type Info struct {
	// Format is "veracrypt", "truecrypt", "luks1" or "luks2".
	Format string `json:"format"`
	// Version is the header format version (TrueCrypt/VeraCrypt header
	// version, LUKS version).
	Version int `json:"version"`
	// MinProgramVersion is the program version the header asks for, as
	// printed by the program (TrueCrypt/VeraCrypt "1.26", "7.1a"...).
	MinProgramVersion string `json:"min_program_version,omitempty"`
	// Encryption is the cipher or cascade, VeraCrypt spelling for
	// TrueCrypt/VeraCrypt ("AES-Twofish-Serpent"), cryptsetup's for LUKS.
	Encryption string `json:"encryption"`
	// Mode is "xts", "cbc", "lrw", "cbc-essiv:sha256", ...
	Mode string `json:"mode"`
	// Hash is the PRF or KDF ("SHA-512", "Whirlpool", "argon2id", ...).
	Hash       string `json:"hash"`
	Iterations int    `json:"iterations,omitempty"`
	// Argon2 memory cost in KiB and parallelism, when Hash is an Argon2.
	MemoryKiB   int `json:"memory_kib,omitempty"`
	Parallelism int `json:"parallelism,omitempty"`
	PIM         int `json:"pim,omitempty"`
	KeySize     int `json:"key_size"` // master key bits
	SectorSize  int `json:"sector_size"`
	// DataOffset and DataSize locate the encrypted data area in the file, in
	// bytes.
	DataOffset int64 `json:"data_offset"`
	DataSize   int64 `json:"data_size"`
	Hidden     bool  `json:"hidden"`
	System     bool  `json:"system,omitempty"`
	// HiddenVolumeSize is set in an outer volume's header when it hosts a
	// hidden volume (TrueCrypt/VeraCrypt record it only in the hidden header,
	// so this is usually 0 for outer volumes).
	HiddenVolumeSize int64 `json:"hidden_volume_size,omitempty"`
	// BackupHeader is true when the primary header did not decrypt and the
	// backup copy was used.
	BackupHeader bool `json:"backup_header,omitempty"`
	ReadOnly     bool `json:"read_only,omitempty"`
	// LUKS facts.
	UUID    string `json:"uuid,omitempty"`
	Label   string `json:"label,omitempty"`
	KeySlot *int   `json:"keyslot,omitempty"`
	// Filesystem found in the data area, when probed.
	Filesystem *Filesystem `json:"filesystem,omitempty"`
	// MasterKey is filled only when explicitly asked for (--show-key).
	MasterKey string `json:"master_key,omitempty"`
	// Details holds format-specific facts for the human-readable dump
	// (LUKS keyslots and segments, header flags), in display order.
	Details []Detail `json:"details,omitempty"`
}

// Detail is one labelled line of format-specific information.
type Detail struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Filesystem is what the probe found in the first sectors of the data area.
type Filesystem struct {
	Type   string `json:"type"`             // "vfat", "exfat", "ntfs", "ext4", ...
	Label  string `json:"label,omitempty"`  // volume label, trimmed
	Serial string `json:"serial,omitempty"` // FAT/NTFS serial as blkid prints it
	UUID   string `json:"uuid,omitempty"`   // ext2/3/4 UUID
	// Version distinguishes FAT12/FAT16/FAT32 and ext2/3/4.
	Version string `json:"version,omitempty"`
}
