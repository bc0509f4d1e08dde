// libchafa (Debian's libchafa-dev, with libglib2.0-dev for its headers): pixels as sixel,
// kitty, iTerm2 or Unicode symbols. Used by the ImageCodec target only.
#include <chafa.h>
