// The MSD outputs of `morula lattice`: the CSV series (a row per sample and species with tracers), the
// plot's points, kept in the run's checkpoints so that a resumed run plots the whole series, and at the
// end the summary lines and the PNG plot. Rank 0 writes the files; every rank keeps the points.
#ifndef MORULA_APPS_MSDSERIES_HPP
#define MORULA_APPS_MSDSERIES_HPP

#include "MsdPlot.hpp"

#include <morula/io/Checkpoint.hpp>
#include <morula/lattice/MsdSample.hpp>

#include <cstddef>
#include <fstream>
#include <string>
#include <vector>

namespace morula::app
{

class MsdSeries
{
  public:
    /*!
      The series of `species` (a name and D0 in nm^2/us each; `rows_per_sample` of them have tracers) on a
      lattice of `spacing_nm`, written to `<output>_msd.csv` when `tracking`. A run from step 0 starts the
      CSV; a resumed one first calls resume().
    */
    MsdSeries( const std::string& output, std::vector<PlotSeries> species, std::size_t rows_per_sample,
               double spacing_nm, bool tracking );

    /*!
      A resumed run (collective under mpirun): keeps the CSV's rows and the checkpoint's plot points of
      the first `samples` samples (a run that went on after its last checkpoint wrote more); this run
      appends to them.
      \throws core::InputError on every rank if the CSV is missing or short
    */
    void resume( std::size_t samples, const io::CheckpointReader& checkpoint );
    //! Opens the CSV (rank 0): new with its header, or after resume() for appending.
    //! \throws core::IoError if it cannot be written
    void open();

    //! The sample of `species` at `t_s` seconds (rank 0 writes its row).
    void add( int species, double t_s, const lattice::MsdSample& m );
    //! Before a checkpoint: the rows so far on the disk, the plot's points in `out`.
    void checkpoint( io::CheckpointWriter& out );
    //! The summary lines and the plot titled `title` (rank 0).
    void finish( const std::string& title ) const;

    const std::vector<PlotSeries>& series() const { return m_series; }
    const std::string& csv_path() const { return m_csv_path; }

  private:
    std::vector<PlotSeries> m_series;
    std::string m_output;
    std::string m_csv_path;
    std::size_t m_rows_per_sample;
    double m_lambda2;
    bool m_tracking;
    bool m_resumed = false;
    std::ofstream m_csv;
};

} // namespace morula::app

#endif
