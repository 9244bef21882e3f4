/* hypercuboid's PMPI library (libhc_pmpi.so): MPI_Allreduce of an unmodified application runs
 * a schedule of the Rust core, chosen by environment variables (see hc_pmpi.c and
 * docs/native.md, section 3). Applications need not include this header; it declares what the
 * library exports besides MPI_Allreduce, for programs (tests) that want to know it was used. */
#ifndef HC_PMPI_H
#define HC_PMPI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The MPI_Allreduce calls of this process so far: those a schedule ran (*served) and those
 * passed to PMPI_Allreduce unchanged (*passed). Either pointer may be NULL. A program that may
 * run without the library declares it weak and tests its address:
 *
 *     extern void hc_pmpi_counts(uint64_t *, uint64_t *) __attribute__((weak));
 *     if (hc_pmpi_counts) hc_pmpi_counts(&served, &passed);
 */
void hc_pmpi_counts(uint64_t *served, uint64_t *passed);

#ifdef __cplusplus
}
#endif

#endif
