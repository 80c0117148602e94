/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* unitmeter's version: in the manifest's "tool" and at the foot of the HTML report. */
#ifndef UM_VERSION_H
#define UM_VERSION_H

#define UM_VERSION "0.1.0"

#endif
