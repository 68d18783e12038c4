package fat

import "github.com/cryptvol/cryptvol/internal/fattest"

type memDev = fattest.MemDev

// kit names fat's test images and its external oracles.
var kit = fattest.Kit{Img: "fat.img", Fsck: "fsck.fat", Oracles: "dosfstools and mtools are the test oracles"}

var newMemDev, newSparseDev, runTool, pattern, mustWrite, mustRead = fattest.NewMemDev, fattest.NewSparseDev, fattest.RunTool, fattest.Pattern, fattest.MustWrite, fattest.MustRead

// image, saveImage (of a memDev), needTools (a skip when an oracle is
// missing) and fsckClean (fsck.fat -n must exit 0).
var image, saveImage, needTools, fsckClean = kit.Image, kit.SaveImage, kit.NeedTools, kit.FsckClean

// sameFiles reports the first file of a map of path to content that a
// filesystem does not hold as it is.
var sameFiles = fattest.SameFiles

var mustFormat, mustOpen = fattest.MustFormat(Format), fattest.MustOpen(Open)
