package fat

import "time"

// FAT stores local wall-clock time with no zone (as DOS, Windows, mtools
// and mkfs.fat do). Dates run from 1980-01-01 to 2107-12-31; times have a
// two-second resolution, and the creation time has an extra byte of 10 ms
// units.

var (
	fatEpoch = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)
	fatEnd   = time.Date(2107, 12, 31, 23, 59, 58, 0, time.UTC)
)

// encodeTime converts t to FAT date and time words in loc, clamped to the
// representable range, plus the 10 ms units beyond the two-second step.
func encodeTime(t time.Time, loc *time.Location) (date, tm uint16, centis byte) {
	if t.IsZero() {
		return 0, 0, 0
	}
	w := t.In(loc)
	// Compare wall clocks by re-expressing them in UTC.
	wall := time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), w.Nanosecond(), time.UTC)
	if wall.Before(fatEpoch) {
		wall = fatEpoch
	}
	if wall.After(fatEnd) {
		wall = fatEnd
	}
	date = uint16(wall.Year()-1980)<<9 | uint16(wall.Month())<<5 | uint16(wall.Day())
	tm = uint16(wall.Hour())<<11 | uint16(wall.Minute())<<5 | uint16(wall.Second()/2)
	centis = byte(wall.Second()%2*100 + wall.Nanosecond()/10_000_000)
	return date, tm, centis
}

// decodeTime converts FAT date and time words (and 10 ms units) to a time
// in loc. An invalid or zero date gives the zero time.
func decodeTime(date, tm uint16, centis byte, loc *time.Location) time.Time {
	year := int(date>>9) + 1980
	month := int(date>>5) & 0x0F
	day := int(date) & 0x1F
	if date == 0 || month < 1 || month > 12 || day < 1 {
		return time.Time{}
	}
	hour := int(tm >> 11)
	min := int(tm>>5) & 0x3F
	sec := int(tm&0x1F) * 2
	if hour > 23 || min > 59 || sec > 59 {
		hour, min, sec = 0, 0, 0
	}
	if centis > 199 {
		centis = 0
	}
	ns := int(centis) * 10_000_000
	return time.Date(year, time.Month(month), day, hour, min, sec, 0, loc).Add(time.Duration(ns))
}
