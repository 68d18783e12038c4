package exfat

import "github.com/cryptvol/cryptvol/internal/fattest"

type memDev = fattest.MemDev

// kit names exfat's test images and its external oracles.
var kit = fattest.Kit{Img: "exfat.img", Fsck: "fsck.exfat", Oracles: "exfatprogs and exfat-fuse are the test oracles; apt-get install exfatprogs exfat-fuse"}

var newMemDev, newSparseDev, runTool, pattern, mustWrite, mustRead = fattest.NewMemDev, fattest.NewSparseDev, fattest.RunTool, fattest.Pattern, fattest.MustWrite, fattest.MustRead

// image, saveImage (of a memDev), needTools (a skip when an oracle is
// missing) and fsckClean (fsck.exfat -n must exit 0).
var image, saveImage, needTools, fsckClean = kit.Image, kit.SaveImage, kit.NeedTools, kit.FsckClean

var mustFormat, mustOpen = fattest.MustFormat(Format), fattest.MustOpen(Open)
